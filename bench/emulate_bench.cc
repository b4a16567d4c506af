// Emulation at scale: GPT-3 175B on A100, M = 12 microbatches per pipeline, 128
// pipelines of 8 stages x TP 8 (8,192 GPUs), 50 straggler slowdown factors; the whole
// `wattcut emulate` computation (frontier, EnvPipe, ZeusGlobal, emulation) per iteration.
#include <benchmark/benchmark.h>

#include "wattcut/base/shared_data.h"
#include "wattcut/emulate/envpipe.h"
#include "wattcut/emulate/straggler_emulation.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

void BM_Emulate8192Gpus50Slowdowns(benchmark::State& state) {
  Result<Profile> profile =
      ReadProfileCsv(SharedDataPath("perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv"), 8);
  if (!profile.ok()) {
    state.SkipWithError("shared data missing: set WATTCUT_SHARED_DIR");
    return;
  }
  for (auto _ : state) {
    PlannerOptions options;
    options.num_microbatches = 12;
    options.p2p_power_w = 83.64;
    Result<Frontier> frontier = ComputeFrontier(*profile, options);
    EnvPipePlan envpipe = PlanEnvPipe(*profile, frontier->setup().schedule, 83.64);
    EmulationSetup setup;
    setup.num_pipelines = 128;
    setup.tensor_parallel = 8;
    setup.time_scale = 10;
    setup.p2p_power_w = 83.64;
    for (int i = 0; i < 50; ++i) setup.slowdowns.push_back(1.0 + 0.01 * i);
    Result<EmulationResult> result = EmulateStragglers(*profile, *frontier, envpipe, setup);
    benchmark::DoNotOptimize(result->results.size());
  }
}
BENCHMARK(BM_Emulate8192Gpus50Slowdowns)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wattcut
