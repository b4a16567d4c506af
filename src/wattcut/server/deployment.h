// What a job's ranks run, delivered without a barrier (issue 12): a versioned deployment that
// each rank fetches in the background (GET /v1/jobs/{id}/deployment, never waiting) and applies
// from a step the server chooses so that every rank has it before that step.
//
// Pure parts, no I/O and no lock (the registry holds the job's mutex):
//   DeploymentTarget  which plan each pipeline should run now (from the schedule decision);
//   StepProgress      each rank's latest reported step, and the apply step of a change;
//   DeploymentPollIntervalS  how often a rank of a job of W ranks polls;
//   PointForPowerTarget, CapDecision  a power target's point, and every pipeline held to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wattcut/plan/frontier.h"
#include "wattcut/server/http_api.h"

#include "wattcut/server/schedule_decision.h"

namespace wattcut::server {

// What the ranks should run: a plan (the selected point, and the point for non-straggler
// pipelines) or, without a ready frontier, every instruction at the highest clock.
struct DeploymentTarget {
  bool plan = false;
  uint64_t frontier_generation = 0;  // which frontier the indices are points of
  size_t base_index = 0;
  size_t non_straggler_index = 0;
  std::set<int> straggler_dp;

  // `frontier_generation` names the frontier a kPlan decision's indices are points of.
  static DeploymentTarget From(const ScheduleDecision& decision, uint64_t frontier_generation);
  size_t PlanIndexFor(int dp_rank) const {
    return PipelinePlanIndex(base_index, non_straggler_index, straggler_dp, dp_rank);
  }
  bool operator==(const DeploymentTarget&) const = default;
};

// The point a power target gives on a frontier (plan/plan_lookup.h's PointForPeakPowerPerGpu
// and PointForPowerPerGpu): the fastest point whose power of the target's kind per GPU is at
// or below the target (met), or, when no point is, the lowest-power point (not met: the
// least power the job can draw, never a target silently ignored).
struct PowerCapPoint {
  size_t index = 0;
  bool met = false;
  // The point's power per GPU (W) of the kind the cap was decided by.
  double power_per_gpu_w = 0;
  // The lookup's message when not met; for a peak target on a frontier without peak powers
  // (a file written without them), that the average power decided instead.
  std::string note;
  // False when a peak target had to be decided by average power (no peak powers).
  bool decided_by_target_kind = true;
};
PowerCapPoint PointForPowerTarget(const Frontier& frontier, const PowerTarget& target);

// Holds every pipeline of a kPlan decision to the cap point: each runs the slower of the point
// it would run without a target (the selection's, or the non-straggler point) and `cap_index`
// (points run slowest -> fastest, so the slower is the lower index). A straggler pipeline too.
void CapDecision(ScheduleDecision& decision, size_t cap_index);

// A deployment: its version (0: nothing deployed yet) and the step from which it applies.
struct Deployment {
  uint64_t version = 0;
  int64_t apply_from_step = 0;
  // What the ranks run. Not stored: after a restart it is decided again from the stored
  // frontier, selection and stragglers (JobRegistry::Load).
  DeploymentTarget target;
};

// How often (s) each rank of a job of `world_size` ranks polls: the job's polls stay near
// 2,000 a second however large it is, between 0.5 s and 30 s.
double DeploymentPollIntervalS(int world_size);
// How far ahead (s) a change is scheduled: two poll intervals plus a second, so that every
// rank, polling on time, has it before its apply step.
double DeploymentLeadS(int world_size);

// The largest training step a rank may report: a million steps a second for 35 years, so that
// apply steps (a step plus at most as many again ahead) stay exact in a double and far inside
// int64_t. A larger one is refused where it comes in.
inline constexpr int64_t kMaxTrainingStep = int64_t{1} << 50;
// kInvalidArgument for a step outside [0, kMaxTrainingStep], naming `what` ("query parameter 'step'").
Status CheckTrainingStep(int64_t step, const std::string& what);

class StepProgress {
 public:
  explicit StepProgress(size_t world_size = 0) : latest_(world_size), first_(world_size) {}

  // Rank `rank` has completed `step` steps at `now_s` (any monotonic clock, seconds).
  void Report(size_t rank, int64_t step, double now_s);
  // The largest step any rank reported; 0 before any report.
  int64_t max_step() const;
  // The smallest latest step over every rank; nullopt while some rank has not reported (since
  // the server started).
  std::optional<int64_t> min_step() const;
  // Steps a second of the fastest rank whose first and latest reports are >= 1 s apart; when
  // none is, the fallback (the rate measured before a server restart, stored with the job; 0).
  double steps_per_s() const;
  void set_fallback_steps_per_s(double steps_per_s) { fallback_steps_per_s_ = steps_per_s; }
  // The step a change made now applies from: max_step() + 1 + twice the steps the fastest rank
  // runs in `lead_s` at its measured rate (rounded up): the rate is an average since its first
  // report, and a job's steps get faster when it leaves its profiling iterations. The steps
  // ahead are at most kMaxTrainingStep, so the apply step is at most 2 x kMaxTrainingStep + 1.
  int64_t ApplyStep(double lead_s) const;

 private:
  struct StepReport {
    bool set = false;
    int64_t step = 0;
    double time_s = 0;
  };
  std::vector<StepReport> latest_;
  std::vector<StepReport> first_;
  double fallback_steps_per_s_ = 0;
};

}  // namespace wattcut::server
