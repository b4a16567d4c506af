#include "wattcut/runtime/simulated_pipeline_profiling.h"

#include <memory>
#include <set>

#include "wattcut/base/clock.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

// One training iteration of a stage: every microbatch's forward, then every backward, each
// bracketed by the profiler's timestamps.
Status RunIteration(OnlineProfiler& profiler, SimulatedBackend& gpu, const StageWorkload& work, int microbatches) {
  if (Status s = profiler.BeginIteration(); !s.ok()) return s;
  for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
    const std::string instruction(InstructionName(kind));
    for (int i = 0; i < microbatches; ++i) {
      if (Status s = profiler.InstructionBegin(instruction); !s.ok()) return s;
      if (auto ran = gpu.Run(0, kind, work.of(kind)); !ran.ok()) return ran.error();
      if (Status s = profiler.InstructionEnd(instruction); !s.ok()) return s;
    }
  }
  return profiler.EndIteration();
}

struct ProfiledStage {
  ProfiledStageSummary summary;
  std::vector<ProfiledRow> rows;
  std::string csv;  // with its header
};

Result<ProfiledStage> ProfileStage(const GpuModel& model, int stage, const SimulatedPipelineProfilingOptions& options) {
  auto clock = std::make_shared<ManualClock>();
  SimulatedBackend gpu({&model}, clock);
  auto setter = StartThreadFrequencySetter(gpu, 0);
  if (!setter.ok()) return setter.error();
  OnlineProfilerOptions profiler_options = options.profiler;
  profiler_options.stage = stage;
  auto profiler = OnlineProfiler::Start(gpu, 0, **setter, *clock, profiler_options);
  if (!profiler.ok()) return profiler.error();
  const StageWorkload& work = stage == options.stages - 1 ? model.last_stage : model.middle_stage;
  while (!(*profiler)->done()) {
    if (Status s = RunIteration(**profiler, gpu, work, options.microbatches); !s.ok()) return s.error();
  }
  (*profiler)->Finish();
  if (Status s = (*setter)->Stop(); !s.ok()) return s.error();
  ProfiledStage profiled;
  profiled.rows = (*profiler)->rows();
  std::set<int> freqs_mhz;
  for (const ProfiledRow& row : profiled.rows) freqs_mhz.insert(row.freq_mhz);
  profiled.summary = {stage, static_cast<int>(freqs_mhz.size()), clock->NowS()};
  profiled.csv = (*profiler)->ToCsv();
  return profiled;
}

}  // namespace

Result<SimulatedPipelineProfile> ProfileSimulatedPipeline(
    const SimulatedPipelineProfilingOptions& options,
    const std::function<void(const ProfiledStageSummary&)>& on_stage) {
  if (options.stages < 1 || options.microbatches < 1) return Error{"stages and microbatches must be >= 1"};
  auto model = FindGpuModel(options.gpu_model);
  if (!model.ok()) return model.error();
  SimulatedPipelineProfile profile;
  for (int stage = 0; stage < options.stages; ++stage) {
    auto profiled = ProfileStage(**model, stage, options);
    if (!profiled.ok()) return profiled.error();
    // One header: the first stage's. The profiler writes its rows after its header line.
    profile.csv += stage == 0 ? profiled->csv : profiled->csv.substr(profiled->csv.find('\n') + 1);
    profile.rows.insert(profile.rows.end(), profiled->rows.begin(), profiled->rows.end());
    profile.stages.push_back(profiled->summary);
    if (on_stage) on_stage(profile.stages.back());
  }
  return profile;
}

}  // namespace wattcut
