// Profiling a whole pipeline on simulated GPUs: every stage on its own simulated GPU of a built-in
// model (profile/gpu_model.h), on its own simulated clock, driven through the online profiler
// exactly as a training job would drive it (forwards then backwards of every microbatch each
// iteration, the frequency setter moving the clock). Simulated time, so a run takes moments and
// gives the same profile every time. The result is the profile CSV the planner reads, for every
// stage (what `wattcut gpu profile` writes).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/runtime/online_profiler.h"

namespace wattcut {

struct SimulatedPipelineProfilingOptions {
  std::string gpu_model = "a100-sxm";  // a built-in GPU model
  int stages = 8;                      // the last stage runs the model's last-stage workload, the others its middle one
  int microbatches = 4;                // forwards and backwards per profiled iteration
  OnlineProfilerOptions profiler;      // the sweep; its stage is set for each stage
};

// How one stage's profiling went.
struct ProfiledStageSummary {
  int stage = 0;
  int frequencies = 0;          // frequencies profiled
  double simulated_time_s = 0;  // simulated GPU time the sweep took
};

struct SimulatedPipelineProfile {
  std::vector<ProfiledStageSummary> stages;
  std::vector<ProfiledRow> rows;  // every stage's rows, stage by stage
  std::string csv;                // the profile CSV: one header, then every stage's rows
};

// Profiles every stage in turn, calling `on_stage` after each (a long sweep shows its progress).
// Fails on options that cannot run (no stage, no microbatch, an unknown GPU model, a sweep the
// online profiler rejects) and on the first error of the profiler or the frequency setter.
Result<SimulatedPipelineProfile> ProfileSimulatedPipeline(
    const SimulatedPipelineProfilingOptions& options,
    const std::function<void(const ProfiledStageSummary&)>& on_stage = nullptr);

}  // namespace wattcut
