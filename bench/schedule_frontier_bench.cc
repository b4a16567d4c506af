// The frontier's cost per point by pipeline schedule (issue 14): 1F1B, Megatron-LM's
// interleaved 1F1B at V = 2 and 4, and ZB-H1, on the shipped profiles (the authors'
// measured GPT-3/A100 and Bloom/A40 profiles in ../shared/data/perseus-sosp24, and the
// built-in A100 and A40 GPU models), 8 devices. Run:
//   build/bench/wattcut_schedule_bench
//
// The interleaved schedule needs a profile per model chunk (8 x V stages); the shipped
// profiles have one per stage, so each stage is cut into V chunks of 1/V its time and
// energy at every frequency (profile/chunk_split.h, SplitStagesIntoChunks: the stage's
// layers divided evenly). ZB-H1 plans each backward as halves (profile/backward_split.h).
// Counters: points, per_point (wall time per frontier point), computations.
//
//   BM_FrontierBySchedule/<profile>/<schedule>/<M>
//     profile:  0 gpt3-a100 (1 ms), 1 bloom-a40 (0.1 ms), 2 a100 model (1 ms), 3 a40 model (1 ms)
//     schedule: 0 1f1b, 1 interleaved V=2, 2 interleaved V=4, 3 zb-h1
#include <benchmark/benchmark.h>

#include <map>
#include <string>

#include "wattcut/base/shared_data.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/chunk_split.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

constexpr int kDevices = 8;

struct ShippedProfile {
  const char* label;
  const char* file;    // under the shared data folder; nullptr for a built-in GPU model
  const char* model;   // the built-in GPU model's name
  double unit_time_s;  // the artifact's: 1 ms for A100, 0.1 ms for A40
  double p2p_power_w;
};

const ShippedProfile kProfiles[] = {
    {"gpt3-a100 1ms", "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv", nullptr, 0.001, 83.64},
    {"bloom-a40 0.1ms", "perseus-sosp24/stage_profile/bloom+a40_bf16.csv", nullptr, 0.0001, 70.38},
    {"a100-model 1ms", nullptr, "a100-sxm", 0.001, 83.64},
    {"a40-model 1ms", nullptr, "a40", 0.001, 70.38},
};

struct ScheduleCase {
  const char* label;
  PipelineScheduleKind kind;
  int virtual_stages;
};

const ScheduleCase kSchedules[] = {
    {"1f1b", PipelineScheduleKind::k1F1B, 1},
    {"interleaved V=2", PipelineScheduleKind::kInterleaved, 2},
    {"interleaved V=4", PipelineScheduleKind::kInterleaved, 4},
    {"zb-h1", PipelineScheduleKind::kZeroBubbleH1, 1},
};

// The 8-stage profile, each stage cut into `chunks` (cached).
const Profile* LoadProfile(size_t index, int chunks) {
  static std::map<std::pair<size_t, int>, Profile> cache;
  auto key = std::make_pair(index, chunks);
  if (auto it = cache.find(key); it != cache.end()) return &it->second;
  const ShippedProfile& p = kProfiles[index];
  Profile stages;
  if (p.file != nullptr) {
    Result<Profile> read = ReadProfileCsv(SharedDataPath(p.file), kDevices);
    if (!read.ok()) return nullptr;
    stages = std::move(*read);
  } else {
    Result<const GpuModel*> model = FindGpuModel(p.model);
    if (!model.ok()) return nullptr;
    stages = MakeModelProfile(**model, kDevices);
  }
  Result<Profile> split = SplitStagesIntoChunks(stages, chunks);
  if (!split.ok()) return nullptr;
  return &cache.emplace(key, std::move(*split)).first->second;
}

void BM_FrontierBySchedule(benchmark::State& state) {
  const auto profile_index = static_cast<size_t>(state.range(0));
  const ScheduleCase& schedule = kSchedules[state.range(1)];
  const Profile* profile = LoadProfile(profile_index, schedule.virtual_stages);
  if (profile == nullptr) {
    state.SkipWithError("shared data missing: set WATTCUT_SHARED_DIR");
    return;
  }
  PlannerOptions options;
  options.num_microbatches = static_cast<int>(state.range(2));
  options.schedule = schedule.kind;
  options.virtual_stages = schedule.virtual_stages;
  options.unit_time_s = kProfiles[profile_index].unit_time_s;
  options.p2p_power_w = kProfiles[profile_index].p2p_power_w;
  size_t points = 0;
  int computations = 0;
  for (auto _ : state) {
    Result<Frontier> frontier = ComputeFrontier(*profile, options);
    if (!frontier.ok()) {
      state.SkipWithError(frontier.error().message.c_str());
      return;
    }
    points = frontier->points().size();
    computations = frontier->num_computations();
    benchmark::DoNotOptimize(points);
  }
  state.counters["points"] = static_cast<double>(points);
  state.counters["computations"] = computations;
  state.counters["per_point"] =
      benchmark::Counter(static_cast<double>(points) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(std::string(kProfiles[profile_index].label) + " " + schedule.label +
                 " M=" + std::to_string(state.range(2)));
}

BENCHMARK(BM_FrontierBySchedule)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2, 3}, {24}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace wattcut
