// Runs a pipeline iteration on paper: given how long every computation takes, when does
// each start and end, how long is the iteration, and how much slack does each have.
#pragma once

#include <vector>

#include "wattcut/dag/pipeline_schedule.h"

namespace wattcut {

struct ComputationTiming {
  double start_s = 0;
  double end_s = 0;
  double slack_s = 0;  // how much later it could end without delaying the iteration
};

struct PipelineExecution {
  double iteration_time_s = 0;
  std::vector<double> stage_compute_s;                 // per stage: sum of its computations' times
  std::vector<std::vector<ComputationTiming>> timing;  // [stage][position in the schedule]
};

// `durations_s[stage][position]` is the time of the schedule's computation at that
// position. Every computation starts as early as its dependencies allow.
PipelineExecution ExecutePipeline(const PipelineSchedule& schedule,
                                  const std::vector<std::vector<double>>& durations_s);

}  // namespace wattcut
