// The planner: from a profile to the iteration time-energy frontier. This is the one
// entry point the CLI, the server and the emulator use.
#pragma once

#include "wattcut/base/result.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/planner_defaults.h"
#include "wattcut/profile/cost_model.h"
#include "wattcut/profile/profile.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

struct PlannerOptions {
  int num_microbatches = 0;
  PipelineScheduleKind schedule = PipelineScheduleKind::k1F1B;
  // Model chunks per device (interleaved only): the profile's stages are devices x
  // virtual_stages model pieces in model order (pipeline_schedule.h).
  int virtual_stages = 1;
  double unit_time_s = kDefaultUnitTimeS;
  double noise_factor = kDefaultNoiseFactor;  // retry factor when <= 3 options survive the strict filter
  CostModelKind cost_model = kDefaultCostModel;
  double p2p_power_w = 0;  // blocking power of a waiting GPU
};

// What the solver works on (one cost table per stage and instruction, the computation DAG), and
// what a Frontier needs to turn the solver's durations back into frequency plans.
struct PlanningProblem {
  TimeCostProblem problem;
  Frontier::Setup setup;
};

// The pipeline devices of a profile planned with `options`: its stages / virtual_stages.
int PipelineDevices(const Profile& profile, const PlannerOptions& options);

// Whether planning `options` splits the profile's backward measurements (a split schedule
// on a profile without backward_input / backward_weight rows): each half of the backward's
// time and energy at every frequency (profile/backward_split.h). Callers warn about it.
bool PlanSplitsMeasuredBackward(const Profile& profile, const PlannerOptions& options);

// Validates the options against the profile and builds the problem. Errors name the offending
// field or (stage, instruction, frequency). Every planning limit (planning_limits.h) is checked
// before the work it bounds: the pipeline's shape before the schedule is built, the cost
// tables' size before any is tabulated, the frontier's size before anything is solved.
Result<PlanningProblem> BuildPlanningProblem(const Profile& profile, const PlannerOptions& options);

// The whole frontier of `planning` (BuildPlanningProblem's), from the slowest iteration to the
// fastest, for callers that also need the problem itself (its cost tables and DAG: the power of
// every plan, plan/frontier_power.h).
Result<Frontier> SolveFrontier(const PlanningProblem& planning);
// BuildPlanningProblem, then SolveFrontier.
Result<Frontier> ComputeFrontier(const Profile& profile, const PlannerOptions& options);

// The same from a profile with one stage per device, as ranks measure it (the planning
// server's): with options.virtual_stages > 1, each of a device's chunks gets its device's
// rows (profile/chunk_split.h, RepeatDeviceRowsPerChunk); else the profile as it is.
Result<Frontier> ComputeFrontierFromDeviceProfile(const Profile& per_device, const PlannerOptions& options);

}  // namespace wattcut
