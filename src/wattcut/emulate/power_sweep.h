// The power sweep: how much a pipeline's power falls for how much slowdown, by uniform clock
// locking (POLCA's lever: every computation at one clock) against Perseus's frontier plans
// (issue 17, docs/power-capped-training.md).
//
// Every number is of one pipeline (a GPU per stage, x tensor_parallel), over its execution
// timeline on the planning problem's DAG (plan/frontier_power.h: every computation starts
// as soon as its dependencies allow; a GPU draws its computation's energy / duration while
// it runs and the blocking power p2p_power_w otherwise):
//   * uniform-lock at clock f: every computation's duration is its measured time at f
//     quantised as the planner quantises it, floor(time / unit_time), and it draws its
//     measured energy at f over that duration. One point per clock measured for every
//     (stage, instruction) the schedule runs.
//   * perseus: every frontier point's planned durations and the cost model's energies
//     (the frontier's energy_j); its peak from the same timeline.
//   * AllMax, the reference: uniform-lock with every (stage, instruction) at its highest
//     measured clock (Profile::fastest_measurement), its duration quantised as above.
// slowdown = T / T_AllMax; the average power is the iteration's energy / T; the peak is the
// largest average over any window_s window of iterations repeated back to back. Power
// reduction = 1 - P / P_AllMax, of the average and of the peak. Tensor parallelism
// multiplies every power by the same factor, so no ratio depends on it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

inline constexpr const char* kPowerSweepFormat = "wattcut.power_sweep/v1";

struct PowerSweepSetup {
  double window_s = 1.0;    // the peak power's window, in (scaled) seconds
  double time_scale = 1;    // times and energies x K (emulate's --time-scale): powers unchanged
  int tensor_parallel = 1;  // GPUs per stage: every power x tp
  std::vector<double> reduction_targets = {0.05, 0.10, 0.15, 0.20};
};

struct PowerSweepPoint {
  double slowdown = 1;          // T / T_AllMax
  double iteration_time_s = 0;  // T (scaled)
  double avg_power_w = 0;
  double peak_power_w = 0;
  int freq_mhz = 0;       // uniform-lock: the clock; perseus: 0
  size_t plan_index = 0;  // perseus: the frontier point; uniform-lock: 0
};

enum class PowerMetric { kPeak, kAverage };
const char* PowerMetricName(PowerMetric metric);  // "peak" / "average"

// 1 - P / P_AllMax of a point.
double PowerReduction(const PowerSweepPoint& point, const PowerSweepPoint& all_max, PowerMetric metric);

// Where a method first reaches a power reduction: the point of least slowdown whose
// reduction is >= the target, and the slowdown interpolated linearly between that point and
// the one before it in slowdown order (whose reduction is below the target). Unset with a
// reason when no point reaches it.
struct ReductionReach {
  std::optional<double> slowdown;               // of the first point that reaches it
  std::optional<double> interpolated_slowdown;  // on the segment that crosses it
  std::optional<double> reduction;              // the reached point's reduction
  std::optional<int> freq_mhz;                  // uniform-lock: the reached point's clock
  std::optional<size_t> plan_index;             // perseus: the reached point
  std::string reason;                           // why not, when unset
};

// The largest reduction of a point whose slowdown is <= `slowdown`; unset when none is.
std::optional<double> BestReductionWithin(const std::vector<PowerSweepPoint>& points, const PowerSweepPoint& all_max,
                                          PowerMetric metric, double slowdown);
// The reduction on the curve through the points in slowdown order, linear between the two
// points around `slowdown`; unset outside the points' slowdowns.
std::optional<double> InterpolatedReductionAt(const std::vector<PowerSweepPoint>& points,
                                              const PowerSweepPoint& all_max, PowerMetric metric, double slowdown);

// Points in any order; `all_max` gives P_AllMax.
ReductionReach FindReduction(const std::vector<PowerSweepPoint>& points, const PowerSweepPoint& all_max,
                             PowerMetric metric, double target, const std::string& method);

struct PowerSweepRow {
  PowerMetric metric = PowerMetric::kPeak;
  double target = 0;  // a fraction: 0.10 is 10 %
  ReductionReach uniform_lock, perseus;
  // (s_perseus - 1) / (s_uniform - 1) of the first points that reach the target, and of the
  // interpolated slowdowns; unset (with a reason) when either method does not reach it or
  // uniform locking reaches it without slowing down.
  std::optional<double> slowdown_ratio;
  std::optional<double> interpolated_slowdown_ratio;
  // Perseus's largest reduction at a slowdown <= uniform locking's, and its ratio to
  // uniform locking's reduction there.
  std::optional<double> perseus_reduction_at_uniform_slowdown;
  std::optional<double> reduction_ratio;
  std::string reason;
  // The goal: half the slowdown, or twice the power reduction at the same slowdown.
  bool goal_met = false;
};

// POLCA's figure for uniform locking of training (../shared/docs/POLCA.md, section 1:
// "locking cut peak server power 22 % for 10 % slowdown") beside what this sweep gives at
// that slowdown.
struct PowerSweepReference {
  double slowdown = 1.10;
  double peak_reduction = 0.22;
  std::optional<double> uniform_lock_peak_reduction;               // best clock within the slowdown
  std::optional<double> uniform_lock_interpolated_peak_reduction;  // on the curve at the slowdown
  std::optional<double> perseus_peak_reduction;                    // best plan within the slowdown
};

struct PowerSweep {
  PowerSweepPoint all_max;
  PowerSweepReference reference;
  std::vector<PowerSweepPoint> uniform_lock;  // clocks from high to low
  std::vector<PowerSweepPoint> perseus;       // frontier order: slowest plan first
  std::vector<PowerSweepRow> table;           // per metric (peak, then average), per target
  std::vector<int> skipped_clocks_mhz;        // clocks some (stage, instruction) did not measure
};

// The pipeline's power over one iteration at AllMax and at each uniform clock lock, as
// SweepPower measures them (unscaled: one GPU per stage, the profile's times), with their peak
// `window_s` power: what the row simulator's training servers run (polca/training_job.h).
struct ClockTimeline {
  int freq_mhz = 0;  // the lock's clock; AllMax: the profile's highest
  PowerTimeline timeline;
  double peak_power_w = 0;
};
struct ClockTimelines {
  ClockTimeline all_max;
  std::vector<ClockTimeline> uniform_lock;  // clocks from high to low
  std::vector<int> skipped_clocks_mhz;      // clocks some (stage, instruction) did not measure
};
Result<ClockTimelines> UniformLockTimelines(const Profile& profile, const PlanningProblem& planning, double window_s);

// `profile` and `planning` are what `frontier` was computed from (BuildPlanningProblem of the
// same profile and options, then SolveFrontier of it). Errors name the clock or frontier point.
Result<PowerSweep> SweepPower(const Profile& profile, const PlanningProblem& planning, const Frontier& frontier,
                              const PowerSweepSetup& setup);

// The table of a sweep (rows for `setup.reduction_targets`, both metrics).
std::vector<PowerSweepRow> PowerSweepTable(const PowerSweep& sweep, const std::vector<double>& targets);

// power_sweep.json (kPowerSweepFormat; docs/power-capped-training.md): `config` (what was
// swept) as given, AllMax, both methods' points and the table; a reach that is not made is
// null with its reason.
nlohmann::json PowerSweepToJson(const PowerSweep& sweep, const nlohmann::json& config);

// The table as `wattcut emulate --power-sweep` prints it, one line per row.
std::string PowerSweepTableText(const PowerSweep& sweep);

}  // namespace wattcut
