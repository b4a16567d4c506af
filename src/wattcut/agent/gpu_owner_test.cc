// One GPU's owner on the fake NVML (the real NVML backend's path: the fake's state shows what
// reached "the driver"): every change checked, applied, recorded; a refused one not recorded.
#include "wattcut/agent/gpu_owner.h"

#include <gtest/gtest.h>

#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"

namespace wattcut::agent {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::ScopedFakeNvml;

struct OwnedGpu {
  explicit OwnedGpu(ScopedFakeNvml&) {
    (void)kLibraryPathSet;
    auto opened = OpenNvmlBackend();
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    backend = std::move(*opened);
    auto description = DescribeGpu(*backend, 0);
    EXPECT_TRUE(description.ok()) << description.error().message;
    owner =
        std::make_unique<GpuOwner>(*description, [this](const std::string& name) { device_errors.push_back(name); });
  }
  std::unique_ptr<GpuBackend> backend;
  std::unique_ptr<GpuOwner> owner;
  std::vector<std::string> device_errors;
};

std::string Locked(ScopedFakeNvml& fake) {
  auto state = fake.Read();
  return state["gpu0.locked_min"] + "-" + state["gpu0.locked_max"];
}

TEST(GpuOwner, TheTrainingLockIsComposedWithTheRowCeilingAndTheCeilingStaysWhenTheHolderIsUndone) {
  ScopedFakeNvml fake;
  OwnedGpu gpu(fake);
  GpuOwner& owner = *gpu.owner;
  ASSERT_TRUE(owner.Start(*gpu.backend, std::nullopt, false).empty());
  ASSERT_TRUE(owner.SetClockLock(*gpu.backend, ClockKind::kSm, ClockRange{1200, 1410}).ok());
  EXPECT_EQ(Locked(fake), "1200-1410");
  ASSERT_TRUE(owner.SetCeiling(*gpu.backend, 1007, 1e12, "row at its limit").ok());
  EXPECT_EQ(owner.control().ceiling->mhz, 1005) << "rounded down to a supported clock";
  EXPECT_EQ(Locked(fake), "1005-1005") << "the ceiling caps the lock";
  EXPECT_TRUE(owner.UndoHolder(*gpu.backend, /*force=*/false).empty());
  EXPECT_FALSE(owner.control().sm_lock.has_value());
  EXPECT_EQ(Locked(fake), "210-1005") << "the holder's lock undone, the row's ceiling kept";
  ASSERT_TRUE(owner.ClearCeiling(*gpu.backend).ok());
  EXPECT_EQ(Locked(fake), "0-0");
}

TEST(GpuOwner, ARefusedChangeIsNotRecordedAndNeverReachesTheGpu) {
  ScopedFakeNvml fake;
  OwnedGpu gpu(fake);
  GpuOwner& owner = *gpu.owner;
  ASSERT_TRUE(owner.Start(*gpu.backend, std::nullopt, false).empty());
  Status unsupported = owner.SetClockLock(*gpu.backend, ClockKind::kMemory, ClockRange{1000, 1000});
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(unsupported.error().message,
            "GPU 0 does not support a memory clock of 1000 MHz (supported: 1593..1215 MHz (2 clocks))");
  EXPECT_EQ(owner.SetClockLock(*gpu.backend, ClockKind::kSm, ClockRange{1410, 1200}).error().message,
            "min_mhz 1410 is above max_mhz 1200");
  EXPECT_EQ(owner.SetPowerLimit(*gpu.backend, 1000).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(owner.SetCeiling(*gpu.backend, 100, 1e12, "").error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(owner.control().memory_lock || owner.control().sm_lock || owner.control().ceiling ||
               owner.control().power_limit_mw);
  EXPECT_EQ(Locked(fake), "0-0");
  EXPECT_TRUE(gpu.device_errors.empty()) << "a refusal is the request's, not the GPU's";
}

TEST(GpuOwner, ADeviceErrorIsNamedAndTheNextChangeTriesAgain) {
  ScopedFakeNvml fake;
  OwnedGpu gpu(fake);
  GpuOwner& owner = *gpu.owner;
  ASSERT_TRUE(owner.Start(*gpu.backend, std::nullopt, false).empty());
  fake.Set("gpu0.fail.nvmlDeviceSetPowerManagementLimit", "4");  // NVML_ERROR_NO_PERMISSION
  Status refused = owner.SetPowerLimit(*gpu.backend, 300);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kDeviceError);
  EXPECT_FALSE(owner.control().power_limit_mw.has_value()) << "what NVML refused is not recorded";
  EXPECT_EQ(gpu.device_errors, (std::vector<std::string>{"NVML_ERROR_NO_PERMISSION"}));
  fake.Erase("gpu0.fail.nvmlDeviceSetPowerManagementLimit");
  ASSERT_TRUE(owner.SetPowerLimit(*gpu.backend, 300).ok());
  EXPECT_EQ(owner.control().power_limit_mw, 300000);
  EXPECT_TRUE(owner.UndoHolder(*gpu.backend, /*force=*/false).empty());
  EXPECT_FALSE(owner.control().power_limit_mw.has_value());
}

TEST(GpuOwner, AnExpiredCeilingIsLiftedOnceAndAStoredOneIsAppliedAtStart) {
  ScopedFakeNvml fake;
  OwnedGpu gpu(fake);
  GpuOwner& owner = *gpu.owner;
  ASSERT_TRUE(owner.Start(*gpu.backend, Ceiling{900, "kept", 2000}, false).empty());
  EXPECT_EQ(Locked(fake), "210-900");
  EXPECT_FALSE(owner.LiftCeilingIfExpired(*gpu.backend, 1999).has_value());
  auto lifted = owner.LiftCeilingIfExpired(*gpu.backend, 2000);
  ASSERT_TRUE(lifted.has_value());
  EXPECT_EQ(lifted->ceiling.mhz, 900);
  EXPECT_TRUE(lifted->applied.ok());
  EXPECT_EQ(Locked(fake), "0-0");
  EXPECT_FALSE(owner.LiftCeilingIfExpired(*gpu.backend, 3000).has_value());
}

// The name /metrics counts a refusal under, from either driver library's message.
TEST(DriverErrorName, NamesNvmlsAndRocmSmisErrors) {
  EXPECT_EQ(DriverErrorName("nvmlDeviceSetGpuLockedClocks(GPU 0, 1200, 1200): Insufficient Permissions "
                            "(NVML_ERROR_NO_PERMISSION): changing clocks ..."),
            "NVML_ERROR_NO_PERMISSION");
  EXPECT_EQ(DriverErrorName("rsmi_dev_clk_range_set(GPU 1, 1000, 1500 MHz, RSMI_CLK_TYPE_SYS): ... "
                            "(RSMI_STATUS_PERMISSION): changing clocks ..."),
            "RSMI_STATUS_PERMISSION");
  EXPECT_EQ(DriverErrorName("the simulated backend refused"), "other");
}

}  // namespace
}  // namespace wattcut::agent
