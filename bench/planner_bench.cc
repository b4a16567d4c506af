// Planner benchmarks: one whole frontier per benchmark iteration, on the authors'
// measured profiles (../shared/data/perseus-sosp24). Counters: frontier points and
// wall time per solver iteration. Run: build/bench/wattcut_bench --benchmark_filter=Frontier
//
//   BM_Frontier/<profile>/<M>           the planner as `wattcut frontier` runs it
//   BM_FrontierFromScratch/<profile>/<M> the same with every min cut computed from
//                                        scratch (no warm start), for the ratio
//   BM_FrontierFile{Write,Read}          the wattcut.frontier/v1 file of the A40 model's
//                                        8 x 96 frontier at 0.1 ms (the server stores it):
//                                        bytes, and the time against BM_FrontierA40Model
#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <string>

#include "wattcut/base/shared_data.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/solver/frontier_solver.h"

namespace wattcut {
namespace {

struct Workload {
  const char* file;
  double unit_time_s;  // the artifact's: 1 ms for A100, 0.1 ms for A40
  double p2p_power_w;
};

const Workload kWorkloads[] = {
    {"perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv", 0.001, 83.64},
    {"perseus-sosp24/stage_profile/bloom+a40_bf16.csv", 0.0001, 70.38},
};

const Profile* LoadProfile(const std::string& relative) {
  static std::map<std::string, Profile> cache;
  auto it = cache.find(relative);
  if (it != cache.end()) return &it->second;
  Result<Profile> profile = ReadProfileCsv(SharedDataPath(relative), 8);
  if (!profile.ok()) return nullptr;
  return &cache.emplace(relative, std::move(profile).value()).first->second;
}

// The artifact's settings for a workload (1F1B, exponential cost model) at M microbatches.
PlannerOptions OptionsFor(const Workload& w, int64_t microbatches) {
  PlannerOptions options;
  options.num_microbatches = static_cast<int>(microbatches);
  options.unit_time_s = w.unit_time_s;
  options.p2p_power_w = w.p2p_power_w;
  return options;
}

void BM_Frontier(benchmark::State& state) {
  const Workload& w = kWorkloads[state.range(0)];
  const Profile* profile = LoadProfile(w.file);
  if (profile == nullptr) {
    state.SkipWithError("shared data missing: set WATTCUT_SHARED_DIR");
    return;
  }
  const PlannerOptions options = OptionsFor(w, state.range(1));
  size_t points = 0;
  for (auto _ : state) {
    Result<Frontier> frontier = ComputeFrontier(*profile, options);
    points = frontier->points().size();
    benchmark::DoNotOptimize(points);
  }
  state.counters["points"] = static_cast<double>(points);
  state.counters["per_iteration"] =
      benchmark::Counter(static_cast<double>(points) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.SetLabel(std::string(state.range(0) == 0 ? "gpt3-a100 1ms" : "bloom-a40 0.1ms") +
                 " M=" + std::to_string(state.range(1)));
}

// The solver alone, warm start on or off.
void RunSolver(benchmark::State& state, bool warm) {
  const Workload& w = kWorkloads[state.range(0)];
  const Profile* profile = LoadProfile(w.file);
  if (profile == nullptr) {
    state.SkipWithError("shared data missing: set WATTCUT_SHARED_DIR");
    return;
  }
  auto planning = BuildPlanningProblem(*profile, OptionsFor(w, state.range(1)));
  if (!planning.ok()) {
    state.SkipWithError(planning.error().message.c_str());
    return;
  }
  const TimeCostProblem& problem = planning->problem;
  long steps = 0;
  for (auto _ : state) {
    FrontierSolver solver(problem);
    solver.set_warm_start(warm);
    solver.Init();
    while (solver.Step()) ++steps;
  }
  state.counters["per_iteration"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_SolverWarmStart(benchmark::State& state) { RunSolver(state, true); }
void BM_SolverFromScratch(benchmark::State& state) { RunSolver(state, false); }

// The A40 model's GPT-3 pipeline: 8 stages, 96 microbatches, 0.1 ms (83,891 points).
PlannerOptions A40ModelOptions() {
  PlannerOptions options;
  options.num_microbatches = 96;
  options.unit_time_s = 0.0001;
  options.p2p_power_w = (*FindGpuModel("a40"))->p2p_power_w;
  return options;
}
const Profile& A40ModelProfile() {
  static const Profile profile = MakeModelProfile(**FindGpuModel("a40"), 8);
  return profile;
}
const Frontier& A40ModelFrontier() {
  static const Frontier frontier = std::move(ComputeFrontier(A40ModelProfile(), A40ModelOptions())).value();
  return frontier;
}

void BM_FrontierA40Model(benchmark::State& state) {
  for (auto _ : state) {
    Result<Frontier> frontier = ComputeFrontier(A40ModelProfile(), A40ModelOptions());
    benchmark::DoNotOptimize(frontier->points().size());
  }
}

void BM_FrontierFileWrite(benchmark::State& state) {
  const Frontier& frontier = A40ModelFrontier();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = FrontierFileText(frontier);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["points"] = static_cast<double>(frontier.points().size());
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["bytes_per_point"] = static_cast<double>(bytes) / static_cast<double>(frontier.points().size());
}

void BM_FrontierFileRead(benchmark::State& state) {
  const std::string text = FrontierFileText(A40ModelFrontier());
  for (auto _ : state) {
    Result<Frontier> read = ParseFrontierFile(text, "bench");
    if (!read.ok()) {
      state.SkipWithError(read.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(read->points().size());
  }
}

BENCHMARK(BM_FrontierA40Model)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FrontierFileWrite)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_FrontierFileRead)->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK(BM_Frontier)->ArgsProduct({{0, 1}, {12, 24, 48, 96}})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SolverWarmStart)->Args({0, 12})->Args({0, 96})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SolverFromScratch)->Args({0, 12})->Args({0, 96})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace wattcut
