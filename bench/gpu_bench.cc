// What setting a frequency costs the training thread (issue 5, requirement 3: under 5 us).
// Every iteration requests a different frequency than the previous one, so no call takes the
// "unchanged" shortcut. The worker applies requests concurrently (only the latest).
//   BM_ThreadSetter_SetFrequency     in-process worker thread over the simulated backend
//   BM_WatchdogSetter_SetFrequency   watchdog process over NVML (the fake libnvidia-ml.so.1)
//   BM_CursorAndSetter_PerInstruction  the in-training client's whole per-instruction work:
//                                    schedule cursor lookup + SetFrequency
#include <benchmark/benchmark.h>

#include <memory>

#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {
namespace {

const bool kFakeNvmlOnPath = (fake_nvml::EnsureLibraryPath(WATTCUT_FAKE_NVML_DIR), true);

void BM_ThreadSetter_SetFrequency(benchmark::State& state) {
  auto backend = std::move(SimulatedBackend::Create("a100-sxm", 1, std::make_shared<ManualClock>())).value();
  auto setter = std::move(StartThreadFrequencySetter(*backend, 0)).value();
  int i = 0;
  for (auto _ : state) setter->SetFrequency((i++ & 1) ? 1200 : 1410);
  state.counters["applied"] = static_cast<double>(setter->stats().applied);
  (void)setter->Stop();
}
BENCHMARK(BM_ThreadSetter_SetFrequency);

void BM_WatchdogSetter_SetFrequency(benchmark::State& state) {
  if (!kFakeNvmlOnPath) state.SkipWithError("fake NVML not on the library path");
  fake_nvml::ScopedFakeNvml fake;
  auto setter = StartWatchdogFrequencySetter({.gpu = 0});
  if (!setter.ok()) {
    state.SkipWithError(setter.error().message.c_str());
    return;
  }
  int i = 0;
  for (auto _ : state) (*setter)->SetFrequency((i++ & 1) ? 1200 : 1410);
  state.counters["applied"] = static_cast<double>((*setter)->stats().applied);
  (void)(*setter)->Stop();
}
BENCHMARK(BM_WatchdogSetter_SetFrequency);

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
