// What setting a frequency costs the training thread (issue 5, requirement 3: under 5 us).
// Every call requests a different frequency than the previous one, so none takes the "unchanged"
// shortcut; the worker applies requests concurrently (only the latest).
//   BM_ThreadSetter_SetFrequency/P     in-process worker thread over the simulated backend
//   BM_WatchdogSetter_SetFrequency/P   watchdog process over NVML (the fake libnvidia-ml.so.1)
//     P = the worker's poll interval in us (500: the default; 0: woken per request, a system call);
//     back to back, and "SleepingWorker": one request per instruction to a worker that has gone
//     back to sleep (each call timed alone), which is the training case.
//   BM_CursorAndSetter_PerInstruction  the in-training client's whole per-instruction work:
//                                      FrequencyPlanRunner (cursor lookup + SetFrequency)
//   BM_RankClient_StepPath/C           the training thread's whole cost of one planned step of
//                                      24 instructions through RankClient (issue 12: < 20 us):
//                                      OnStepBegin, OnInstructionBegin/End each, OnStepEnd; C = 1:
//                                      a new deployment is due at every step (taken and installed),
//                                      C = 0: none is. The server is scripted (no network); its
//                                      background rounds run outside the timed part.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>

#include "bench/rank_step_bench.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/runtime/frequency_plan_runner.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/rank_client.h"

namespace wattcut {
namespace {

const bool kFakeNvmlOnPath = (fake_nvml::EnsureLibraryPath(WATTCUT_FAKE_NVML_DIR), true);

double PollIntervalS(const benchmark::State& state) { return static_cast<double>(state.range(0)) * 1e-6; }

// Requests back to back, alternating between two clocks.
void SetBackToBack(benchmark::State& state, FrequencySetter& setter) {
  int i = 0;
  for (auto _ : state) setter.SetFrequency((i++ & 1) ? 1200 : 1410);
  state.counters["applied"] = static_cast<double>(setter.stats().applied);
  (void)setter.Stop();
}

// The training case: one request per instruction to a worker that has gone back to sleep (or to
// poll()), each call timed alone (manual time).
void SetToSleepingWorker(benchmark::State& state, FrequencySetter& setter) {
  int i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    setter.SetFrequency((i++ & 1) ? 1200 : 1410);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    (void)setter.WaitUntilApplied();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  (void)setter.Stop();
}

std::unique_ptr<SimulatedBackend> SimulatedGpu() {
  return std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
}

// A watchdog setter on the fake NVML, or null after marking the benchmark skipped.
std::unique_ptr<FrequencySetter> FakeNvmlWatchdog(benchmark::State& state) {
  if (!kFakeNvmlOnPath) state.SkipWithError("fake NVML not on the library path");
  auto setter = StartWatchdogFrequencySetter({.gpu = 0, .poll_interval_s = PollIntervalS(state)});
  if (!setter.ok()) {
    state.SkipWithError(setter.error().message.c_str());
    return nullptr;
  }
  return std::move(*setter);
}

void BM_ThreadSetter_SetFrequency(benchmark::State& state) {
  auto backend = SimulatedGpu();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0, false, PollIntervalS(state))).value();
  SetBackToBack(state, *setter);
}
BENCHMARK(BM_ThreadSetter_SetFrequency)->Arg(500)->Arg(0);

void BM_ThreadSetter_SetFrequency_SleepingWorker(benchmark::State& state) {
  auto backend = SimulatedGpu();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0, false, PollIntervalS(state))).value();
  SetToSleepingWorker(state, *setter);
}
BENCHMARK(BM_ThreadSetter_SetFrequency_SleepingWorker)->Arg(500)->Arg(0)->UseManualTime()->Iterations(2000);

void BM_WatchdogSetter_SetFrequency(benchmark::State& state) {
  fake_nvml::ScopedFakeNvml fake;
  if (auto setter = FakeNvmlWatchdog(state)) SetBackToBack(state, *setter);
}
BENCHMARK(BM_WatchdogSetter_SetFrequency)->Arg(500)->Arg(0);

void BM_WatchdogSetter_SetFrequency_SleepingWorker(benchmark::State& state) {
  fake_nvml::ScopedFakeNvml fake;
  if (auto setter = FakeNvmlWatchdog(state)) SetToSleepingWorker(state, *setter);
}
BENCHMARK(BM_WatchdogSetter_SetFrequency_SleepingWorker)->Arg(500)->Arg(0)->UseManualTime()->Iterations(2000);

// The runtime's whole per-instruction work (FrequencyPlanRunner: cursor lookup + SetFrequency).
void BM_CursorAndSetter_PerInstruction(benchmark::State& state) {
  auto backend = SimulatedGpu();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0)).value();
  // 1F1B-like iteration of 24 instructions with alternating frequencies.
  std::vector<ScheduleEntry> plan;
  for (int i = 0; i < 12; ++i) {
    plan.push_back({"forward", 1410 - 15 * i});
    plan.push_back({"backward", 1200 - 15 * i});
  }
  FrequencyPlanRunner runner(*setter, plan);
  size_t position = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(runner.OnInstructionBegin(plan[position].instruction));
    if (++position == plan.size()) {
      position = 0;
      (void)runner.OnStepEnd();
    }
  }
  (void)setter->Stop();
}
BENCHMARK(BM_CursorAndSetter_PerInstruction);

void BM_RankClient_StepPath(benchmark::State& state) {
  RankClientOptions options;
  options.backend.kind = "simulated";
  options.watchdog_setter = false;
  bench::ScriptDeployments(options, /*change_every_step=*/state.range(0) != 0);
  auto started = RankClient::Start(options);
  if (!started.ok()) {
    state.SkipWithError(started.error().message.c_str());
    return;
  }
  RankClient& client = **started;
  bench::RunTimedSteps(state, client);
  state.counters["plan_changes"] = static_cast<double>(client.plan_version());
  (void)client.Close();
}
BENCHMARK(BM_RankClient_StepPath)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace wattcut
