// Power per plan: the execution timeline of a frontier point and the peak of its power, for a
// pipeline's frontier (plan/frontier.h) or a generic DAG's (plan/dag_frontier.h): a GPU below
// is a pipeline's stage or a DAG's device, a computation a DAG's operation.
//
// A point's plan is executed as ExecutePipeline (pipeline_execution.h) executes it: every
// computation starts as soon as its dependencies (the DAG the frontier was solved on) allow
// and runs its planned duration. While a computation runs, its GPU draws the computation's
// energy over its duration, energy = cost(d) + p2p_power * d (the cost model's effective
// energy plus the blocking energy it stands for); otherwise the GPU draws the blocking
// power. The pipeline's power P(t) is the sum over its GPUs, so its integral over one
// iteration is the point's energy_j exactly.
//
// The peak 1-s power of a point is the largest average of P over any window of `window_s`
// seconds, with iterations repeated back to back (P periodic with the iteration time T), so
// a window may span the end of one iteration and the start of the next, and a window
// longer than T holds whole iterations plus a part of one:
//     peak = max over a of (1/W) * integral of P over [a, a + W].
// P is piecewise constant with steps at computation starts and ends, so the integral is
// piecewise linear in a and its maximum is found exactly at a window whose start or end is
// a step: O(computations) per point after one sort of the steps.
//
// The whole frontier is swept point after point: the durations are updated by each point's
// changes, and only the changed computations' powers are recomputed; the steps stay nearly in
// order from one point to the next and are sorted again by insertion. Ranges of points can be
// swept on several threads.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/planner.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

inline constexpr double kPeakPowerWindowS = 1.0;

// A step function of time: `power_w[i]` from `time_s[i]` to `time_s[i + 1]` (the last
// entry of time_s is the end of the iteration, with no power after it).
struct PowerTimeline {
  std::vector<double> time_s;
  std::vector<double> power_w;
};

class FrontierPower {
 public:
  // `problem` is the one `frontier` was solved on (plan/planner.h's BuildPlanningProblem):
  // its precedences order the computations, its cost tables give their energies. Fails when
  // the two do not match (a different number of computations, a cyclic DAG).
  static Result<FrontierPower> Create(const Frontier& frontier, const TimeCostProblem& problem);
  // The same for any frontier (a generic DAG's, plan/dag_frontier.h): `blocking_power_w` is
  // what all its devices draw while none of their computations runs.
  static Result<FrontierPower> Create(const DurationFrontier& frontier, const TimeCostProblem& problem,
                                      double unit_time_s, double blocking_power_w);

  // The pipeline's power over one iteration of the plan with these durations (flat, as
  // Frontier::DurationsAt gives them).
  Result<PowerTimeline> Timeline(const std::vector<int64_t>& durations) const;
  // The peak `window_s` power of that timeline (see above).
  Result<double> PeakPower(const std::vector<int64_t>& durations, double window_s = kPeakPowerWindowS) const;

  // Sets every point's peak_1s_power_w, sweeping the frontier once, in `threads` ranges of
  // points at once (each from the frontier's checkpoint before it; at least 1,000 points a
  // range).
  Status SetPeakPowers(DurationFrontier& frontier, double window_s = kPeakPowerWindowS, int threads = 1) const;

 private:
  FrontierPower() = default;
  // SetPeakPowers on points [begin, end).
  Status SetPeakPowersOf(DurationFrontier& frontier, size_t begin, size_t end, double window_s) const;
  // The computation's power above blocking power at duration d (cost(d) / (d * unit)).
  Result<double> ExcessPower(size_t computation, int64_t duration_units) const;
  // ExcessPower of every computation at `durations` (one duration per computation, else an error).
  Result<std::vector<double>> ExcessPowers(const std::vector<int64_t>& durations) const;
  // Start time of every computation (in units) and the makespan.
  int64_t Schedule(const std::vector<int64_t>& durations, std::vector<int64_t>& start) const;
  // The step function of the pipeline's power for these durations and excess powers, as
  // breakpoints_, rates_ and integral_ (see the .cc); returns the makespan.
  int64_t BuildTimeline(const std::vector<int64_t>& durations, const std::vector<double>& excess_w) const;
  // The peak over windows of `window_units` of the periodic step function BuildTimeline built.
  double PeakOfTimeline(int64_t makespan_units, double window_units) const;

  const TimeCostProblem* problem_ = nullptr;
  double unit_time_s_ = 0;
  double blocking_power_w_ = 0;  // all GPUs blocked: a pipeline's stages * p2p_power
  std::vector<int> topological_order_;
  std::vector<int> first_in_, in_;  // CSR predecessors
  // Scratch space of the sweep (the object is used by one thread at a time).
  mutable std::vector<int64_t> start_;
  mutable std::vector<int64_t> time_;    // per step (2 per computation): its time
  mutable std::vector<uint32_t> order_;  // the steps in time order, kept from point to point
  mutable std::vector<double> breakpoints_, rates_, integral_;
};

// The planner's frontier of `profile` (plan/planner.h, ComputeFrontier) with every point's
// peak 1-s power set, on `threads` threads: what `wattcut frontier` writes.
Result<Frontier> ComputeFrontierWithPeakPowers(const Profile& profile, const PlannerOptions& options, int threads = 1);
// The same from a profile with one stage per device, as ranks measure it (the planning
// server's; plan/planner.h, ComputeFrontierFromDeviceProfile).
Result<Frontier> ComputeFrontierWithPeakPowersFromDeviceProfile(const Profile& per_device,
                                                                const PlannerOptions& options, int threads = 1);

}  // namespace wattcut
