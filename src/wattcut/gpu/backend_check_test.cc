// The read-only backend check on the simulated backend (on a manual clock: the sampling window
// passes at once and the energy counter follows it exactly) and on the real NVML backend over the
// fake libnvidia-ml.so.1, whose state file injects each failure the check must report.
#include "wattcut/gpu/backend_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::OpenFakeNvmlBackend;
using fake_nvml::ScopedFakeNvml;

std::unique_ptr<GpuBackend> Simulated(int gpus, std::shared_ptr<ManualClock> clock) {
  return std::move(SimulatedBackend::Create("a100-sxm", gpus, std::move(clock))).value();
}

// The results of one check named `name` about `gpu`.
std::vector<CheckResult> Named(const BackendCheckReport& report, const std::string& name, int gpu) {
  std::vector<CheckResult> found;
  for (const CheckResult& r : report.results) {
    if (r.name == name && r.gpu == gpu) found.push_back(r);
  }
  return found;
}

// "[PASS] GPU 0: ..." for every result, as `wattcut gpu check` shows them, for failure messages.
std::string Shown(const BackendCheckReport& report) {
  std::string text;
  for (const CheckResult& r : report.results) {
    text += "[" + std::string(CheckOutcomeName(r.outcome)) + "] " + r.name + " GPU " + std::to_string(r.gpu) + ": " +
            r.detail + "\n";
  }
  return text + "VERDICT: " + report.summary + "\n";
}

TEST(BackendCheckTest, SimulatedGpusPassEveryCheckAndEverySetterIsOnlyLogged) {
  auto clock = std::make_shared<ManualClock>();
  const GpuModel& model = **FindGpuModel("a100-sxm");
  std::vector<CheckResult> observed;
  BackendCheckOptions options;
  options.duration_s = 1.0;
  options.sample_interval_s = 0.25;  // four readings, exactly one second of the manual clock
  options.on_result = [&](const CheckResult& r) { observed.push_back(r); };
  const BackendCheckReport report = CheckGpuBackend(Simulated(2, clock), *clock, options);
  ASSERT_EQ(report.verdict, CheckVerdict::kPass) << Shown(report);
  EXPECT_EQ(report.summary,
            "PASS: the simulated backend discovers, reads clocks, power and energy; setters were exercised in "
            "dry-run only (no GPU setting was changed)");
  EXPECT_EQ(clock->NowS(), 2.0);  // one window per GPU

  // The observer saw every result, in order, as it was found.
  ASSERT_EQ(observed.size(), report.results.size());
  for (size_t i = 0; i < observed.size(); ++i) EXPECT_EQ(observed[i].detail, report.results[i].detail);

  ASSERT_EQ(report.results.front().name, "discovery");
  EXPECT_EQ(report.results.front().gpu, -1);
  EXPECT_EQ(report.results.front().detail, "backend simulated sees 2 GPU(s)");
  const std::string idle_w = FixedDecimals(static_cast<double>(std::llround(model.idle_power_w * 1000)) / 1000.0, 1);
  for (int gpu : {0, 1}) {
    auto identity = Named(report, "identity", gpu);
    ASSERT_EQ(identity.size(), 1u);
    EXPECT_EQ(identity[0].detail, "Simulated a100-sxm (wattcut GPU model) GPU-SIM-a100-sxm-" + std::to_string(gpu));
    auto clocks = Named(report, "supported clocks", gpu);
    ASSERT_EQ(clocks.size(), 1u);
    EXPECT_EQ(clocks[0].detail, "max memory clock 1593 MHz; SM clocks 1410..210 MHz (81 clocks)");
    auto power = Named(report, "power", gpu);
    ASSERT_EQ(power.size(), 1u);
    EXPECT_EQ(power[0].detail, "power over 1.0 s: mean " + idle_w + " W, min " + idle_w + " W, max " + idle_w +
                                   " W; highest SM clock seen 1410 MHz");
    auto energy = Named(report, "energy vs power", gpu);
    ASSERT_EQ(energy.size(), 1u);
    EXPECT_EQ(energy[0].outcome, CheckOutcome::kPass);
    EXPECT_NE(energy[0].detail.find(", agreeing with the power readings"), std::string::npos) << energy[0].detail;
    // Each of the five setters logged what it would do; none failed.
    auto setters = Named(report, "setter", gpu);
    ASSERT_EQ(setters.size(), 5u) << Shown(report);
    for (const CheckResult& s : setters) EXPECT_EQ(s.outcome, CheckOutcome::kDryRun) << s.detail;
    EXPECT_EQ(setters[0].detail, "dry run: would lock GPU " + std::to_string(gpu) + " SM clocks to 210-210 MHz");
  }
  EXPECT_EQ(report.Count(CheckOutcome::kFail), 0);
  EXPECT_EQ(report.Count(CheckOutcome::kWarn), 0);
  EXPECT_EQ(report.Count(CheckOutcome::kDryRun), 10);
}

TEST(BackendCheckTest, ChecksOnlyTheGpuAskedForAndRejectsOneThatDoesNotExist) {
  auto clock = std::make_shared<ManualClock>();
  BackendCheckOptions options;
  options.gpu = 1;
  options.duration_s = 0;  // no sampling window: no power result
  BackendCheckReport one = CheckGpuBackend(Simulated(2, clock), *clock, options);
  EXPECT_EQ(one.verdict, CheckVerdict::kPass) << Shown(one);
  for (const CheckResult& r : one.results) EXPECT_TRUE(r.gpu == -1 || r.gpu == 1) << r.detail;
  EXPECT_EQ(Named(one, "identity", 1).size(), 1u);
  EXPECT_TRUE(Named(one, "power", 1).empty());
  EXPECT_EQ(clock->NowS(), 0.0);

  options.gpu = 5;
  BackendCheckReport missing = CheckGpuBackend(Simulated(2, clock), *clock, options);
  EXPECT_EQ(missing.verdict, CheckVerdict::kFail);
  EXPECT_EQ(missing.summary, "FAIL");
  ASSERT_EQ(missing.results.size(), 1u);
  EXPECT_EQ(missing.results[0].name, "gpus");
  EXPECT_EQ(missing.results[0].outcome, CheckOutcome::kFail);
  EXPECT_EQ(missing.results[0].detail, "GPU 5 does not exist (2 GPUs)");
}

TEST(BackendCheckTest, OptionsThatCannotRunAreAFailedCheck) {
  auto clock = std::make_shared<ManualClock>();
  const std::vector<std::pair<double, double>> bad = {{-1.0, 0.1}, {1.0, 0.0}, {std::nan(""), 0.1}};
  for (auto [duration_s, interval_s] : bad) {
    BackendCheckOptions options;
    options.duration_s = duration_s;
    options.sample_interval_s = interval_s;
    BackendCheckReport report = CheckGpuBackend(Simulated(1, clock), *clock, options);
    EXPECT_EQ(report.verdict, CheckVerdict::kFail);
    ASSERT_EQ(report.results.size(), 1u);
    EXPECT_EQ(report.results[0].detail, "duration_s must be a number of seconds >= 0 and sample_interval_s one > 0");
  }
  BackendCheckReport none = CheckGpuBackend(std::unique_ptr<GpuBackend>(), *clock, BackendCheckOptions{});
  EXPECT_EQ(none.verdict, CheckVerdict::kFail);
  EXPECT_EQ(none.summary, "FAIL: the backend does not open");
  EXPECT_EQ(clock->NowS(), 0.0);
}

TEST(BackendCheckTest, BackendsThatDoNotOpenSayWhetherTheMachineHasAGpu) {
  ASSERT_TRUE(kLibraryPathSet);
  SteadyClock clock;
  BackendCheckOptions options;
  options.duration_s = 0;
  BackendOptions absent;
  absent.kind = "nvml";
  absent.nvml_library = "libnvidia-ml-absent.so.1";
  BackendCheckReport no_library = CheckGpuBackend(absent, clock, options);
  EXPECT_EQ(no_library.verdict, CheckVerdict::kNoGpu);
  EXPECT_EQ(no_library.summary, "NO GPU: this machine has no usable NVIDIA GPU or driver; nothing to check");
  ASSERT_EQ(no_library.results.size(), 1u);
  EXPECT_EQ(no_library.results[0].name, "open");
  EXPECT_EQ(no_library.results[0].outcome, CheckOutcome::kFail);
  EXPECT_EQ(no_library.results[0].detail.rfind("open the nvml backend: cannot load NVML (libnvidia-ml-absent.so.1)", 0),
            0u)
      << no_library.results[0].detail;

  BackendOptions nvml;
  nvml.kind = "nvml";
  {
    ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "0"}});
    EXPECT_EQ(CheckGpuBackend(nvml, clock, options).verdict, CheckVerdict::kNoGpu);
  }
  {
    ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlInit_v2", "9"}});  // the kernel driver is not loaded
    EXPECT_EQ(CheckGpuBackend(nvml, clock, options).verdict, CheckVerdict::kNoGpu);
  }
  {
    ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetCount_v2", "999"}});  // a broken NVML, not a missing GPU
    BackendCheckReport broken = CheckGpuBackend(nvml, clock, options);
    EXPECT_EQ(broken.verdict, CheckVerdict::kFail);
    EXPECT_EQ(broken.summary, "FAIL: the backend does not open");
    ASSERT_EQ(broken.results.size(), 1u);
    EXPECT_EQ(broken.results[0].detail,
              "open the nvml backend: nvmlDeviceGetCount_v2(): Unknown Error (NVML_ERROR_UNKNOWN)");
  }
  BackendOptions unknown_model;
  unknown_model.kind = "simulated";
  unknown_model.simulated_model = "h100";
  EXPECT_EQ(CheckGpuBackend(unknown_model, clock, options).verdict, CheckVerdict::kFail);
  EXPECT_FALSE(MeansNoGpu(Error{"unknown GPU model 'h100'"}));
}

TEST(BackendCheckTest, OpensTheBackendWithoutItsOwnDryRunWrapper) {
  SteadyClock clock;
  BackendOptions simulated;
  simulated.kind = "simulated";
  simulated.dry_run = true;  // ignored: the check wraps the backend in its own dry run
  std::vector<std::string> logged_elsewhere;
  simulated.dry_run_log = [&](const std::string& line) { logged_elsewhere.push_back(line); };
  BackendCheckOptions options;
  options.duration_s = 0;
  BackendCheckReport report = CheckGpuBackend(simulated, clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kPass) << Shown(report);
  EXPECT_EQ(report.results.front().detail, "backend simulated sees 1 GPU(s)");
  EXPECT_EQ(report.Count(CheckOutcome::kDryRun), 5);
  EXPECT_TRUE(logged_elsewhere.empty());
}

TEST(BackendCheckTest, FakeNvmlPassesWithoutCallingAnySetter) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  SteadyClock clock;
  BackendCheckOptions options;
  options.duration_s = 0.2;
  options.sample_interval_s = 0.05;
  BackendCheckReport report = CheckGpuBackend(OpenFakeNvmlBackend(), clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kPass) << Shown(report);
  EXPECT_EQ(report.results.front().detail, "backend nvml sees 2 GPU(s)");
  EXPECT_EQ(Named(report, "identity", 1).at(0).detail,
            "NVIDIA A100-SXM4-80GB (fake) GPU-fake0000-0000-0000-0000-000000000001");
  EXPECT_EQ(report.Count(CheckOutcome::kDryRun), 10);
  EXPECT_EQ(Named(report, "power", 0).size(), 1u);
  EXPECT_EQ(fake.Log().find("nvmlDeviceSet"), std::string::npos) << fake.Log();
  EXPECT_EQ(fake.Log().find("nvmlDeviceReset"), std::string::npos) << fake.Log();
}

TEST(BackendCheckTest, EveryFailedReadingIsCountedInTheVerdict) {
  ASSERT_TRUE(kLibraryPathSet);
  SteadyClock clock;
  BackendCheckOptions options;
  options.gpu = 0;
  options.duration_s = 0.1;
  options.sample_interval_s = 0.05;
  ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetName", "3"},
                                       {"fail.nvmlDeviceGetSupportedMemoryClocks", "3"},
                                       {"fail.nvmlDeviceGetPowerUsage", "3"}});
  BackendCheckReport report = CheckGpuBackend(OpenFakeNvmlBackend(), clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kFail) << Shown(report);
  EXPECT_EQ(report.summary, "FAIL: 3 check(s) failed (no GPU setting was changed)");
  ASSERT_EQ(Named(report, "identity", 0).size(), 1u);
  EXPECT_EQ(Named(report, "identity", 0)[0].outcome, CheckOutcome::kFail);
  EXPECT_NE(Named(report, "identity", 0)[0].detail.find("nvmlDeviceGetName"), std::string::npos);
  ASSERT_EQ(Named(report, "supported clocks", 0).size(), 1u);
  EXPECT_EQ(
      Named(report, "supported clocks", 0)[0].detail.rfind("supported clocks: nvmlDeviceGetSupportedMemoryClocks", 0),
      0u)
      << Shown(report);
  ASSERT_EQ(Named(report, "power", 0).size(), 1u);
  EXPECT_EQ(Named(report, "power", 0)[0].outcome, CheckOutcome::kFail);
  EXPECT_EQ(Named(report, "power", 0)[0].detail.rfind("power reading: nvmlDeviceGetPowerUsage", 0), 0u);
  EXPECT_TRUE(Named(report, "energy vs power", 0).empty());
  // Without clocks the clock setters cannot even be tried: warnings, not more failures.
  const auto setters = Named(report, "setter", 0);
  ASSERT_FALSE(setters.empty());
  EXPECT_EQ(setters[0].outcome, CheckOutcome::kWarn);
  EXPECT_EQ(setters[0].detail, "dry-run setter: no SM clocks");
  EXPECT_EQ(fake.Log().find("nvmlDeviceSet"), std::string::npos);
}

TEST(BackendCheckTest, AnOldDriverWithoutAnEnergyCounterFails) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  SteadyClock clock;
  BackendCheckOptions options;
  options.gpu = 1;
  options.duration_s = 0.1;
  options.sample_interval_s = 0.05;
  BackendCheckReport report = CheckGpuBackend(
      OpenFakeNvmlBackend(std::string(WATTCUT_FAKE_NVML_OLD_DRIVER_DIR) + "/libnvidia-ml.so.1"), clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kFail) << Shown(report);
  EXPECT_EQ(report.summary, "FAIL: 1 check(s) failed (no GPU setting was changed)");
  auto energy = Named(report, "energy counter", 1);
  ASSERT_EQ(energy.size(), 1u);
  EXPECT_EQ(energy[0].detail.rfind("energy counter: nvmlDeviceGetTotalEnergyConsumption is missing from ", 0), 0u)
      << energy[0].detail;
  EXPECT_EQ(Named(report, "power", 1).at(0).outcome, CheckOutcome::kPass);  // power still read
  EXPECT_TRUE(Named(report, "energy vs power", 1).empty());
}

TEST(BackendCheckTest, AnEnergyCounterThatDisagreesWithThePowerReadingsIsAWarning) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  // The fake's counter integrates its 400 W over real time; the check's window is 100 s of a manual
  // clock that passes in moments, so the counter shows next to nothing while the power reads 400 W.
  ManualClock clock;
  BackendCheckOptions options;
  options.gpu = 0;
  options.duration_s = 100;
  options.sample_interval_s = 1;
  BackendCheckReport report = CheckGpuBackend(OpenFakeNvmlBackend(), clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kPass) << Shown(report);
  EXPECT_EQ(report.summary,
            "PASS with 1 warning(s): the nvml backend discovers, reads clocks, power and energy; setters were "
            "exercised in dry-run only (no GPU setting was changed)");
  auto energy = Named(report, "energy vs power", 0);
  ASSERT_EQ(energy.size(), 1u);
  EXPECT_EQ(energy[0].outcome, CheckOutcome::kWarn);
  EXPECT_NE(energy[0].detail.find(", differing from the power readings by more than 25 %"), std::string::npos)
      << energy[0].detail;
  EXPECT_EQ(Named(report, "power", 0).at(0).detail,
            "power over 100.0 s: mean 400.0 W, min 400.0 W, max 400.0 W; highest SM clock seen 1410 MHz");
}

TEST(BackendCheckTest, ASetterTheDryRunRejectsIsAWarning) {
  ASSERT_TRUE(kLibraryPathSet);
  // The power-limit range cannot be read, so the dry-run power-limit setter cannot be checked.
  ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetPowerManagementLimitConstraints", "3"}});
  ManualClock clock;
  BackendCheckOptions options;
  options.gpu = 0;
  options.duration_s = 0;
  BackendCheckReport report = CheckGpuBackend(OpenFakeNvmlBackend(), clock, options);
  EXPECT_EQ(report.verdict, CheckVerdict::kPass) << Shown(report);
  EXPECT_EQ(report.summary.rfind("PASS with 1 warning(s): ", 0), 0u) << report.summary;
  auto setters = Named(report, "setter", 0);
  ASSERT_EQ(setters.size(), 5u) << Shown(report);  // one warning, four logged
  EXPECT_EQ(setters[0].outcome, CheckOutcome::kWarn);
  EXPECT_EQ(setters[0].detail.rfind("dry-run setter: nvmlDeviceGetPowerManagementLimitConstraints", 0), 0u)
      << setters[0].detail;
  EXPECT_EQ(report.Count(CheckOutcome::kDryRun), 4);
}

TEST(BackendCheckTest, ClockListsAreShownAsTheirRange) {
  EXPECT_EQ(ClockRangeText({1410, 1395, 210}), "1410..210 MHz (3 clocks)");
  EXPECT_EQ(ClockRangeText({1593}), "1593..1593 MHz (1 clocks)");
  EXPECT_EQ(ClockRangeText({}), "none");
}

TEST(BackendCheckTest, OutcomeNames) {
  EXPECT_EQ(CheckOutcomeName(CheckOutcome::kPass), "PASS");
  EXPECT_EQ(CheckOutcomeName(CheckOutcome::kWarn), "WARN");
  EXPECT_EQ(CheckOutcomeName(CheckOutcome::kFail), "FAIL");
  EXPECT_EQ(CheckOutcomeName(CheckOutcome::kDryRun), "DRY");
}

}  // namespace
}  // namespace wattcut
