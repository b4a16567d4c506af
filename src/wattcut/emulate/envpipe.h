// The EnvPipe baseline (ATC '23), re-implemented from its description in PERSEUS.md §7:
// the pipeline's outer envelope (every computation of the last stage, and each stage's
// first forward and last backward) runs at the highest frequency; everything else
// starts at its slowest Pareto-optimal frequency, and rounds of "raise every
// non-envelope computation on the critical path by one Pareto step (15 MHz on the
// shipped profiles)" run until the iteration is no longer than the envelope allows
// (the all-max iteration time). EnvPipe plans once and cannot react to stragglers.
#pragma once

#include <vector>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/pipeline_execution.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

struct EnvPipePlan {
  std::vector<std::vector<int>> freq_mhz;  // [stage][position in the schedule]
  PipelineExecution execution;
  double iteration_time_s = 0;
  double energy_j = 0;  // one pipeline: computations plus blocking until iteration_time_s
  int rounds = 0;
};

EnvPipePlan PlanEnvPipe(const Profile& profile, const PipelineSchedule& schedule, double p2p_power_w);

}  // namespace wattcut
