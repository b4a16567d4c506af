// What setting a frequency costs the training thread (issue 5, requirement 3: under 5 us).
// Every call requests a different frequency than the previous one, so none takes the "unchanged"
// shortcut; the worker applies requests concurrently (only the latest).
//   BM_ThreadSetter_SetFrequency/P     in-process worker thread over the simulated backend
//   BM_WatchdogSetter_SetFrequency/P   watchdog process over NVML (the fake libnvidia-ml.so.1)
//     P = the worker's poll interval in us (500: the default; 0: woken per request, a system call);
//     back to back, and "SleepingWorker": one request per instruction to a worker that has gone
//     back to sleep (each call timed alone), which is the training case.
//   BM_CursorAndSetter_PerInstruction  the in-training client's whole per-instruction work:
//                                      schedule cursor lookup + SetFrequency (default setter)
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>

#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {
namespace {

const bool kFakeNvmlOnPath = (fake_nvml::EnsureLibraryPath(WATTCUT_FAKE_NVML_DIR), true);

double PollIntervalS(const benchmark::State& state) { return static_cast<double>(state.range(0)) * 1e-6; }

void BM_ThreadSetter_SetFrequency(benchmark::State& state) {
  auto backend = std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0, false, PollIntervalS(state))).value();
  int i = 0;
  for (auto _ : state) setter->SetFrequency((i++ & 1) ? 1200 : 1410);
  state.counters["applied"] = static_cast<double>(setter->stats().applied);
  (void)setter->Stop();
}
BENCHMARK(BM_ThreadSetter_SetFrequency)->Arg(500)->Arg(0);

// One request per instruction to a worker thread that has gone back to sleep (manual time).
void BM_ThreadSetter_SetFrequency_SleepingWorker(benchmark::State& state) {
  auto backend = std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0, false, PollIntervalS(state))).value();
  int i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    setter->SetFrequency((i++ & 1) ? 1200 : 1410);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    (void)setter->WaitUntilApplied();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  (void)setter->Stop();
}
BENCHMARK(BM_ThreadSetter_SetFrequency_SleepingWorker)->Arg(500)->Arg(0)->UseManualTime()->Iterations(2000);

void BM_WatchdogSetter_SetFrequency(benchmark::State& state) {
  if (!kFakeNvmlOnPath) state.SkipWithError("fake NVML not on the library path");
  fake_nvml::ScopedFakeNvml fake;
  auto setter = StartWatchdogFrequencySetter({.gpu = 0, .poll_interval_s = PollIntervalS(state)});
  if (!setter.ok()) {
    state.SkipWithError(setter.error().message.c_str());
    return;
  }
  int i = 0;
  for (auto _ : state) (*setter)->SetFrequency((i++ & 1) ? 1200 : 1410);
  state.counters["applied"] = static_cast<double>((*setter)->stats().applied);
  (void)(*setter)->Stop();
}
BENCHMARK(BM_WatchdogSetter_SetFrequency)->Arg(500)->Arg(0);

// The training case: one request per instruction, to a watchdog that has gone back to sleep, so
// every call pays the wake-up system call. Each call is timed alone (manual time).
void BM_WatchdogSetter_SetFrequency_SleepingWorker(benchmark::State& state) {
  if (!kFakeNvmlOnPath) state.SkipWithError("fake NVML not on the library path");
  fake_nvml::ScopedFakeNvml fake;
  auto setter = StartWatchdogFrequencySetter({.gpu = 0, .poll_interval_s = PollIntervalS(state)});
  if (!setter.ok()) {
    state.SkipWithError(setter.error().message.c_str());
    return;
  }
  int i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    (*setter)->SetFrequency((i++ & 1) ? 1200 : 1410);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    (void)(*setter)->WaitUntilApplied();
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // the watchdog goes back to poll()
  }
  (void)(*setter)->Stop();
}
BENCHMARK(BM_WatchdogSetter_SetFrequency_SleepingWorker)->Arg(500)->Arg(0)->UseManualTime()->Iterations(2000);

void BM_CursorAndSetter_PerInstruction(benchmark::State& state) {
  auto backend = std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0)).value();
  // 1F1B-like iteration of 24 instructions with alternating frequencies.
  std::vector<ScheduleEntry> plan;
  for (int i = 0; i < 12; ++i) {
    plan.push_back({"forward", 1410 - 15 * i});
    plan.push_back({"backward", 1200 - 15 * i});
  }
  ScheduleCursor cursor(plan);
  size_t position = 0;
  for (auto _ : state) {
    auto freq = cursor.OnInstructionBegin(plan[position].instruction);
    setter->SetFrequency(*freq);
    if (++position == plan.size()) {
      position = 0;
      (void)cursor.OnStepEnd();
    }
  }
  (void)setter->Stop();
}
BENCHMARK(BM_CursorAndSetter_PerInstruction);

}  // namespace
}  // namespace wattcut
