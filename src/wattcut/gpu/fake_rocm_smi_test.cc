// The ROCm SMI backend over the fake librocm_smi64.so.1 (fake_amdgpu/fake_rocm_smi.cc): GPUs that
// run, whose clocks move their power and energy, for what a static sysfs tree cannot show: the
// read-only check's verdict, a lock's effect, ROCm 6's layout of rsmi_frequencies_t, a 32-bit
// energy accumulator that wraps, a driver's refusal as the message a user reads.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "wattcut/base/clock.h"
#include "wattcut/gpu/backend_check.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/rocm_smi_backend.h"

namespace wattcut {
namespace {

using fake_nvml::kRocmSmiStateVariable;
using fake_nvml::ScopedFakeNvml;
using fake_nvml::State;

std::unique_ptr<GpuBackend> OpenFakeRocmSmi() {
  auto backend = OpenRocmSmiBackend(WATTCUT_FAKE_ROCM_SMI_LIBRARY);
  EXPECT_TRUE(backend.ok()) << backend.error().message;
  return backend.ok() ? std::move(backend).value() : nullptr;
}

TEST(FakeRocmSmi, TheReadOnlyCheckPassesWithoutCallingAnySetter) {
  ScopedFakeNvml fake({}, kRocmSmiStateVariable);
  SteadyClock clock;
  BackendCheckOptions options;
  options.duration_s = 0.2;
  options.sample_interval_s = 0.05;
  BackendCheckReport report = CheckGpuBackend(OpenFakeRocmSmi(), clock, options);
  std::string shown;
  for (const CheckResult& r : report.results) shown += r.name + ": " + r.detail + "\n";
  EXPECT_EQ(report.verdict, CheckVerdict::kPass) << shown;
  EXPECT_EQ(report.results.front().detail, "backend rocm-smi sees 2 GPU(s)");
  for (const char* setter :
       {"rsmi_dev_clk_range_set", "rsmi_dev_gpu_clk_freq_set", "rsmi_dev_perf_level_set", "rsmi_dev_power_cap_set"}) {
    EXPECT_EQ(fake.Log().find(setter), std::string::npos) << fake.Log();
  }
}

TEST(FakeRocmSmi, ALockLowersTheClockAndThePowerAndAResetPutsTheDriverBackToAuto) {
  ScopedFakeNvml fake({}, kRocmSmiStateVariable);
  auto backend = OpenFakeRocmSmi();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(*backend->SmClockMhz(0), 2100);
  const std::vector<int> clocks = *SupportedSmClocksMhz(*backend, 0);
  EXPECT_EQ(clocks, SclkGridMhz({500, 2100}));
  ASSERT_TRUE(backend->LockGpuClocks(0, 1200, 1200).ok());
  EXPECT_EQ(*backend->SmClockMhz(0), 1200);
  EXPECT_EQ(SupportedSmClocksMhz(*backend, 0).value(), clocks);  // the clock it runs is no new level
  EXPECT_EQ(fake.Read()["gpu0.perf"], "manual");
  ASSERT_TRUE(LockMemoryClockToMax(*backend, 0).ok());
  EXPECT_EQ(fake.Read()["gpu0.mem_mask"], "2");  // the driver lists 900 then 1300
  ASSERT_TRUE(backend->ResetGpuClocks(0).ok());
  EXPECT_EQ(*backend->SmClockMhz(0), 2100);
  EXPECT_EQ(fake.Read()["gpu0.mem_mask"], "2");  // the memory lock was put back after "auto"
  ASSERT_TRUE(backend->ResetMemoryClocks(0).ok());
  EXPECT_EQ(fake.Read()["gpu0.perf"], "auto");
  EXPECT_EQ(fake.Read()["gpu0.mem_mask"], "0");
}

TEST(FakeRocmSmi, Rocm6sLayoutOfTheClockLevelsIsRead) {
  ScopedFakeNvml fake(State{{"version", "6.1.2"}}, kRocmSmiStateVariable);
  auto backend = OpenFakeRocmSmi();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(*backend->SupportedMemoryClocksMhz(0), (std::vector<int>{1300, 900}));
  EXPECT_EQ(*backend->SmClockMhz(1), 2100);
  EXPECT_EQ(SupportedSmClocksMhz(*backend, 1)->back(), 500);
}

// ROCm 6 lists a deep-sleep clock first ("S: 19Mhz"): not a level to lock to, and the clock an idle
// GPU reads.
TEST(FakeRocmSmi, ADeepSleepClockIsNoLevelButTheClockOfASleepingGpu) {
  ScopedFakeNvml fake(State{{"version", "6.1.2"}, {"deep_sleep_mhz", "19"}}, kRocmSmiStateVariable);
  auto backend = OpenFakeRocmSmi();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(*SupportedSmClocksMhz(*backend, 0), SclkGridMhz({500, 2100}));
  EXPECT_EQ(*backend->SmClockMhz(0), 2100);
  ASSERT_TRUE(backend->LockGpuClocks(0, 1200, 1200).ok());
  EXPECT_EQ(*backend->SmClockMhz(0), 1200);
  EXPECT_FALSE(backend->LockGpuClocks(0, 19, 1200).ok());
  fake.Set("load", "0");
  EXPECT_EQ(*backend->SmClockMhz(0), 19);
}

TEST(FakeRocmSmi, AThirtyTwoBitEnergyAccumulatorThatWrapsCountsOn) {
  // 2^32 counts of 15.3 uJ are 65,712.999 J. GPUs that draw nothing, whose counter the test moves:
  // 1 J before the wrap, then 1 J after it.
  ScopedFakeNvml fake(
      State{
          {"energy_counter_bits", "32"}, {"gpu0.energy_mj", "65712000"}, {"idle_power_mw", "0"}, {"max_power_mw", "0"}},
      kRocmSmiStateVariable);
  auto backend = OpenFakeRocmSmi();
  ASSERT_NE(backend, nullptr);
  EXPECT_NEAR(static_cast<double>(*backend->TotalEnergyMj(0)), 65'712'000.0, 1.0);
  fake.Set("gpu0.energy_mj", "65714000");  // the accumulator now reads about 1 J
  EXPECT_NEAR(static_cast<double>(*backend->TotalEnergyMj(0)), 65'714'000.0, 1.0);
}

TEST(FakeRocmSmi, ADriversRefusalNamesTheCallTheStatusAndWhatToDo) {
  ScopedFakeNvml fake(State{{"fail.rsmi_dev_clk_range_set", "4"}}, kRocmSmiStateVariable);
  auto backend = OpenFakeRocmSmi();
  ASSERT_NE(backend, nullptr);
  Status s = backend->LockGpuClocks(1, 1000, 1500);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kDeviceError);
  EXPECT_NE(s.error().message.find("rsmi_dev_clk_range_set(GPU 1, 1000, 1500 MHz, RSMI_CLK_TYPE_SYS): "),
            std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("(RSMI_STATUS_PERMISSION): changing clocks and power caps"), std::string::npos);
  EXPECT_FALSE(backend->SetPowerLimitMw(0, 100'000).ok());  // under the cap's range
}

TEST(FakeRocmSmi, NoDriverIsAnOpenErrorThatSaysSo) {
  unsetenv(kRocmSmiStateVariable);  // the fake's rsmi_init then fails as with no amdgpu driver
  auto backend = OpenRocmSmiBackend(WATTCUT_FAKE_ROCM_SMI_LIBRARY);
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("rsmi_init(0): "), std::string::npos) << backend.error().message;
  EXPECT_NE(backend.error().message.find("is the amdgpu driver loaded?"), std::string::npos);
  EXPECT_TRUE(MeansNoGpu(backend.error())) << backend.error().message;
}

}  // namespace
}  // namespace wattcut
