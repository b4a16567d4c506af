// `wattcut gpu lock` checks every argument against every selected GPU before it changes
// anything, and undoes what it applied when a later step still fails: on the simulated
// backend and on the fake NVML (whose state file shows what the GPUs were left with).
// `wattcut gpu check` prints each check's result and a verdict with its exit status, and
// `wattcut gpu profile` writes the profile CSV and each stage's progress.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "tests/cli/command_runner.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"

namespace wattcut {
namespace {

using fake_nvml::ScopedFakeNvml;
using testing::RunWattcut;

// Every wattcut this test starts loads the fake as libnvidia-ml.so.1.
const bool kLibraryPathSet = (setenv("LD_LIBRARY_PATH", WATTCUT_FAKE_NVML_DIR, 1), true);

std::string Value(const fake_nvml::State& state, const std::string& key) {
  auto it = state.find(key);
  return it == state.end() ? "" : it->second;
}

TEST(GpuLockCommand, SimulatedBackendChecksThePowerLimitBeforeLockingTheClock) {
  auto result = RunWattcut("gpu lock --backend simulated --sm 1200 --power-limit 10");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");  // nothing was locked, not even for a moment
  EXPECT_EQ(result.err,
            "wattcut gpu lock: error: GPU 0: power limit 10.0 W is outside the allowed 250.0-500.0 W "
            "(nothing was changed)\n");
  auto clock = RunWattcut("gpu lock --backend simulated --gpus 2 --sm 5000 --power-limit 1e300");
  EXPECT_EQ(clock.exit_code, 1);
  EXPECT_EQ(clock.out, "");
  EXPECT_NE(clock.err.find("--power-limit: expected a positive number of watts below 1000000, got 1e+300"),
            std::string::npos)
      << clock.err;
  auto range = RunWattcut("gpu lock --backend simulated --gpus 2 --sm 5000");
  EXPECT_EQ(range.exit_code, 1);
  EXPECT_EQ(range.err,
            "wattcut gpu lock: error: GPU 0: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz; "
            "GPU 1: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz (nothing was changed)\n");
  auto good = RunWattcut("gpu lock --backend simulated --sm 1200 --power-limit 300");
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("GPU 0: set the power limit to 300.0 W"), std::string::npos) << good.out;
}

TEST(GpuLockCommand, FakeNvmlIsNeverTouchedByAnInvalidLock) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml nvml;
  auto result = RunWattcut("gpu lock --sm 1200 --power-limit 10");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("GPU 0: power limit 10.0 W is outside the allowed 100.0-400.0 W; "
                            "GPU 1: power limit 10.0 W is outside the allowed 100.0-400.0 W (nothing was changed)"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(nvml.Log().find("nvmlDeviceSet"), std::string::npos) << nvml.Log();
  EXPECT_EQ(Value(nvml.Read(), "gpu0.locked_max"), "");
}

TEST(GpuLockCommand, AStepThatFailsAfterOthersWereAppliedRollsThemBack) {
  ASSERT_TRUE(kLibraryPathSet);
  // GPU 0 had its limit lowered to 350 W before; GPU 1 refuses clock locks.
  ScopedFakeNvml nvml(
      fake_nvml::State{{"gpu0.power_limit_mw", "350000"}, {"gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4"}});
  auto result = RunWattcut("gpu lock --sm 1200 --power-limit 300");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("GPU 0: locked SM clocks to 1200-1200 MHz"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("nvmlDeviceSetGpuLockedClocks(GPU 1, 1200, 1200)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("rolled back: GPU 0 power limit restored to 350.0 W, GPU 0 SM clocks reset"),
            std::string::npos)
      << result.err;
  const fake_nvml::State state = nvml.Read();
  EXPECT_EQ(Value(state, "gpu0.locked_max"), "0");
  EXPECT_EQ(Value(state, "gpu0.power_limit_mw"), "350000");
  EXPECT_EQ(Value(state, "gpu1.locked_max"), "");

  // The memory lock failing on GPU 0 undoes GPU 0's SM lock.
  ScopedFakeNvml memory(fake_nvml::State{{"gpu0.fail.nvmlDeviceSetMemoryLockedClocks", "3"}});
  auto partial = RunWattcut("gpu lock --gpu 0 --sm 1200 --memory-max");
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.err.find("rolled back: GPU 0 SM clocks reset"), std::string::npos) << partial.err;
  EXPECT_EQ(Value(memory.Read(), "gpu0.locked_max"), "0");
}

TEST(GpuCheckCommand, PrintsEveryResultAndTheVerdictWithItsExitStatus) {
  auto pass = RunWattcut("gpu check --backend simulated --duration 0");
  EXPECT_EQ(pass.exit_code, 0) << pass.err;
  EXPECT_EQ(pass.out,
            "[PASS] backend simulated sees 1 GPU(s)\n"
            "[PASS] GPU 0: Simulated a100-sxm (wattcut GPU model) GPU-SIM-a100-sxm-0\n"
            "[PASS] GPU 0: max memory clock 1593 MHz; SM clocks 1410..210 MHz (81 clocks)\n"
            "[DRY] GPU 0: dry run: would lock GPU 0 SM clocks to 210-210 MHz\n"
            "[DRY] GPU 0: dry run: would lock GPU 0 memory clocks to 1593-1593 MHz\n"
            "[DRY] GPU 0: dry run: would reset GPU 0 SM clocks\n"
            "[DRY] GPU 0: dry run: would reset GPU 0 memory clocks\n"
            "[DRY] GPU 0: dry run: would set GPU 0 power limit to 500000 mW\n"
            "VERDICT: PASS: the simulated backend discovers, reads clocks, power and energy; setters were exercised "
            "in dry-run only (no GPU setting was changed)\n");
  EXPECT_EQ(pass.err, "");

  auto missing = RunWattcut("gpu check --backend simulated --gpu 5");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "[FAIL] GPU 5 does not exist (1 GPU)\nVERDICT: FAIL\n");

  auto no_gpu = RunWattcut("gpu check --nvml-library libnvidia-ml-absent.so.1");
  EXPECT_EQ(no_gpu.exit_code, 2);
  EXPECT_EQ(no_gpu.out.rfind("[FAIL] open the nvml backend: cannot load NVML (libnvidia-ml-absent.so.1): ", 0), 0u)
      << no_gpu.out;
  EXPECT_NE(no_gpu.out.find("\nVERDICT: NO GPU: this machine has no usable NVIDIA GPU or driver; nothing to check\n"),
            std::string::npos)
      << no_gpu.out;

  auto negative = RunWattcut("gpu check --backend simulated --duration -1");
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_EQ(negative.out, "");
  EXPECT_EQ(negative.err, "wattcut gpu check: error: --duration must be a number of seconds >= 0\n");
}

TEST(GpuProfileCommand, WritesOneCsvForEveryStageAndShowsEachStagesProgress) {
  testing::TempDir dir;
  const std::string csv_path = dir.path() + "/profile.csv";
  auto written = RunWattcut("gpu profile --stages 2 --step 300 --out " + csv_path);
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.out, "");
  EXPECT_EQ(written.err,
            "stage 0: 2 frequencies profiled, 5.0 s of simulated GPU time\n"
            "stage 1: 2 frequencies profiled, 5.4 s of simulated GPU time\n"
            "wrote " +
                csv_path + "\n");
  const std::string csv = testing::ReadFile(csv_path);
  EXPECT_EQ(csv.substr(0, csv.find('\n') + 1), "stage,instruction,frequency,time,energy,samples,time_std,energy_std\n");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // 2 stages x 1410, 1110 MHz x forward, backward
  EXPECT_NE(csv.find("\n1,backward,1110,"), std::string::npos) << csv;

  auto to_stdout = RunWattcut("gpu profile --stages 1 --step 300");
  EXPECT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out.rfind("stage,instruction,frequency,", 0), 0u) << to_stdout.out;
  EXPECT_EQ(to_stdout.err, "stage 0: 2 frequencies profiled, 5.4 s of simulated GPU time\n");

  auto nvml = RunWattcut("gpu profile --backend nvml");
  EXPECT_EQ(nvml.exit_code, 1);
  EXPECT_EQ(nvml.err,
            "wattcut gpu profile: error: only --backend simulated: on real GPUs the profiler runs inside the training "
            "job (wattcut::OnlineProfiler, see docs/gpu.md)\n");
  auto no_stage = RunWattcut("gpu profile --stages 0");
  EXPECT_EQ(no_stage.exit_code, 1);
  EXPECT_EQ(no_stage.err, "wattcut gpu profile: error: --stages and --microbatches must be >= 1\n");
}

}  // namespace
}  // namespace wattcut
