// The real NVML backend against the fake libnvidia-ml.so.1, found by the loader through
// LD_LIBRARY_PATH like the real one: dlopen, symbol lookup and every error path run for real.
#include "wattcut/gpu/nvml_backend.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "wattcut/gpu/dry_run_backend.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/open_backend.h"

namespace wattcut {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::OpenFakeNvmlBackend;
using fake_nvml::ScopedFakeNvml;

TEST(NvmlBackendTest, DiscoversGpusAndClocks) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "3"}, {"name", "NVIDIA A40 (fake)"}, {"max_mhz", "1740"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "nvml");
  EXPECT_EQ(*backend->DeviceCount(), 3);
  auto info = backend->Info(2);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->name, "NVIDIA A40 (fake)");
  EXPECT_EQ(info->uuid, "GPU-fake0000-0000-0000-0000-000000000002");
  EXPECT_EQ(*backend->SupportedMemoryClocksMhz(0), (std::vector<int>{1593, 1215}));
  // 103 clocks: more than the first buffer, so the INSUFFICIENT_SIZE retry runs.
  auto clocks = SupportedSmClocksMhz(*backend, 0);
  ASSERT_TRUE(clocks.ok()) << clocks.error().message;
  ASSERT_EQ(clocks->size(), (1740u - 210u) / 15u + 1u);
  EXPECT_EQ(clocks->front(), 1740);
  EXPECT_EQ(clocks->back(), 210);
  EXPECT_NE(fake.Log().find("nvmlDeviceGetSupportedGraphicsClocks(1593) -> 7"), std::string::npos);
  EXPECT_NE(fake.Log().find("nvmlDeviceGetSupportedGraphicsClocks(1593) -> 0"), std::string::npos);

  auto unknown_memory = backend->SupportedGraphicsClocksMhz(0, 1000);
  ASSERT_FALSE(unknown_memory.ok());
  EXPECT_EQ(unknown_memory.error().message,
            "nvmlDeviceGetSupportedGraphicsClocks(GPU 0, 1000 MHz): Not Found (NVML_ERROR_NOT_FOUND)");
  auto missing = backend->Info(3);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "GPU 3 does not exist (3 GPUs)");
}

TEST(NvmlBackendTest, LocksAndResetsClocksAndPowerLimit) {
  ScopedFakeNvml fake;
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->LockGpuClocks(1, 1200, 1200).ok());
  EXPECT_EQ(fake.Read()["gpu1.locked_max"], "1200");
  EXPECT_EQ(*backend->SmClockMhz(1), 1200);
  EXPECT_EQ(*backend->SmClockMhz(0), 1410);
  ASSERT_TRUE(LockMemoryClockToMax(*backend, 1).ok());
  EXPECT_EQ(fake.Read()["gpu1.mem_locked"], "1593");
  ASSERT_TRUE(backend->ResetGpuClocks(1).ok());
  ASSERT_TRUE(backend->ResetMemoryClocks(1).ok());
  EXPECT_EQ(fake.Read()["gpu1.locked_max"], "0");
  EXPECT_EQ(fake.Read()["gpu1.mem_locked"], "0");

  auto limits = backend->PowerLimits(0);
  ASSERT_TRUE(limits.ok()) << limits.error().message;
  EXPECT_EQ(limits->default_mw, 400000);
  EXPECT_EQ(limits->min_mw, 100000);
  EXPECT_EQ(limits->max_mw, 400000);
  ASSERT_TRUE(backend->SetPowerLimitMw(0, 250000).ok());
  EXPECT_EQ(fake.Read()["gpu0.power_limit_mw"], "250000");
  ASSERT_TRUE(ResetPowerLimit(*backend, 0).ok());
  EXPECT_EQ(fake.Read()["gpu0.power_limit_mw"], "400000");

  Status out_of_range = backend->LockGpuClocks(0, 1500, 1500);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.error().message,
            "nvmlDeviceSetGpuLockedClocks(GPU 0, 1500, 1500): Invalid Argument (NVML_ERROR_INVALID_ARGUMENT): "
            "the value is out of the GPU's range");
  EXPECT_FALSE(backend->LockGpuClocks(0, 0, 0).ok());
  EXPECT_FALSE(backend->SetPowerLimitMw(0, 50000).ok());
}

TEST(NvmlBackendTest, ReadsPowerAndAnEnergyCounterThatFollowsTheClock) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "1"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(*backend->PowerUsageMw(0), 400000);
  ASSERT_TRUE(backend->LockGpuClocks(0, 705, 705).ok());
  EXPECT_EQ(*backend->PowerUsageMw(0), 60000 + 340000 / 8);
  const int64_t e0 = *backend->TotalEnergyMj(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t e1 = *backend->TotalEnergyMj(0);
  // At least 50 ms at 102.5 W.
  EXPECT_GE(e1 - e0, 5000);
}

// NVML's two power fields: the instant one follows a clock change at once, the 1 s average lags
// behind it and gets there; a GPU without the average says so for that field alone.
TEST(NvmlBackendTest, ReadsTheInstantAndTheAveragedPowerFields) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}, {"gpu1.no_power_average", "1"}, {"power_average_s", "0.1"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  auto before = backend->PowerFields(0);
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(before->instant_mw, 400000);
  ASSERT_TRUE(backend->LockGpuClocks(0, 705, 705).ok());
  auto after = backend->PowerFields(0);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->instant_mw, 60000 + 340000 / 8);
  ASSERT_TRUE(after->average_mw.has_value());
  EXPECT_GE(*after->average_mw, *after->instant_mw);  // still coming down from 400 W
  bool settled = false;
  for (int i = 0; i < 500 && !settled; ++i) {  // a first-order lag of 0.1 s here: within 1 % in about 0.5 s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    settled = std::abs(*backend->PowerFields(0)->average_mw - *after->instant_mw) < 0.01 * *after->instant_mw;
  }
  EXPECT_TRUE(settled) << *backend->PowerFields(0)->average_mw;
  auto no_average = backend->PowerFields(1);
  ASSERT_TRUE(no_average.ok());
  EXPECT_EQ(no_average->instant_mw, 400000);
  EXPECT_FALSE(no_average->average_mw.has_value());
}

TEST(NvmlBackendTest, ReadsThePciAddressAndPersistenceMode) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "2"}, {"gpu1.persistence_mode", "0"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->Info(0)->pci_address, "0000:18:00.0");
  EXPECT_EQ(backend->Info(1)->pci_address, "0000:19:00.0");
  EXPECT_EQ(*backend->PersistenceMode(0), true);
  EXPECT_EQ(*backend->PersistenceMode(1), false);
}

TEST(NvmlBackendTest, AnOldDriverHasNoPowerFields) {
  ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "1"}});
  auto backend = OpenNvmlBackend(std::string(WATTCUT_FAKE_NVML_OLD_DRIVER_DIR) + "/libnvidia-ml.so.1");
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  auto fields = (*backend)->PowerFields(0);
  ASSERT_FALSE(fields.ok());
  EXPECT_EQ(fields.error().code, ErrorCode::kNotFound);
  EXPECT_NE(fields.error().message.find("nvmlDeviceGetFieldValues"), std::string::npos);
}

TEST(NvmlBackendTest, NoPermissionSaysWhatIsNeeded) {
  ScopedFakeNvml fake(
      fake_nvml::State{{"fail.nvmlDeviceSetGpuLockedClocks", "4"}, {"fail.nvmlDeviceSetPowerManagementLimit", "4"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  Status lock = backend->LockGpuClocks(0, 1200, 1200);
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.error().message,
            "nvmlDeviceSetGpuLockedClocks(GPU 0, 1200, 1200): Insufficient Permissions (NVML_ERROR_NO_PERMISSION): "
            "changing clocks and power limits needs root or CAP_SYS_ADMIN (in a container: --cap-add SYS_ADMIN); "
            "reading needs neither");
  EXPECT_EQ(fake.Read()["gpu0.locked_max"], "");
  Status limit = backend->SetPowerLimitMw(0, 300000);
  ASSERT_FALSE(limit.ok());
  EXPECT_NE(limit.error().message.find("CAP_SYS_ADMIN"), std::string::npos);
  // Readings still work.
  EXPECT_TRUE(backend->PowerUsageMw(0).ok());
}

TEST(NvmlBackendTest, NotSupportedNamesTheFunction) {
  ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetTotalEnergyConsumption", "3"},
                                       {"fail.nvmlDeviceSetMemoryLockedClocks", "3"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  auto energy = backend->TotalEnergyMj(0);
  ASSERT_FALSE(energy.ok());
  EXPECT_EQ(energy.error().message.rfind("nvmlDeviceGetTotalEnergyConsumption(GPU 0): Not Supported "
                                         "(NVML_ERROR_NOT_SUPPORTED): this GPU or driver does not support it",
                                         0),
            0u)
      << energy.error().message;
  Status memory = LockMemoryClockToMax(*backend, 0);
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.error().message.find("nvmlDeviceSetMemoryLockedClocks(GPU 0, 1593, 1593): Not Supported"),
            std::string::npos);
}

TEST(NvmlBackendTest, MissingLibraryIsExplained) {
  auto backend = OpenNvmlBackend("libnvidia-ml-missing.so.1");
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("cannot load NVML (libnvidia-ml-missing.so.1): "), std::string::npos);
  EXPECT_NE(backend.error().message.find("Is the NVIDIA driver installed?"), std::string::npos);
  EXPECT_NE(backend.error().message.find("--backend simulated"), std::string::npos);
}

TEST(NvmlBackendTest, LibraryWithoutNvmlIsRejected) {
  auto backend = OpenNvmlBackend("libm.so.6");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.error().message, "libm.so.6 lacks nvmlInit_v2; it is not a usable NVML (driver too old?)");
}

TEST(NvmlBackendTest, NoGpuAndNoDriverAreExplained) {
  {
    ScopedFakeNvml fake(fake_nvml::State{{"gpu_count", "0"}});
    auto backend = OpenNvmlBackend();
    ASSERT_FALSE(backend.ok());
    EXPECT_EQ(backend.error().message.rfind("NVML (libnvidia-ml.so.1) sees no GPU", 0), 0u);
  }
  {
    ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlInit_v2", "9"}});
    auto backend = OpenNvmlBackend();
    ASSERT_FALSE(backend.ok());
    EXPECT_EQ(
        backend.error().message,
        "nvmlInit_v2(): Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED): the NVIDIA kernel driver is not loaded");
  }
  {
    ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetCount_v2", "999"}});
    auto backend = OpenNvmlBackend();
    ASSERT_FALSE(backend.ok());
    EXPECT_EQ(backend.error().message, "nvmlDeviceGetCount_v2(): Unknown Error (NVML_ERROR_UNKNOWN)");
  }
  {
    ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetHandleByIndex_v2", "15"}});
    auto backend = OpenFakeNvmlBackend();
    ASSERT_NE(backend, nullptr);
    auto info = backend->Info(0);
    ASSERT_FALSE(info.ok());
    EXPECT_EQ(info.error().message,
              "nvmlDeviceGetHandleByIndex_v2(GPU 0): GPU is lost (NVML_ERROR_GPU_IS_LOST): the GPU fell off the bus; "
              "it needs a reset");
  }
}

TEST(NvmlBackendTest, OldDriverWithoutAFunction) {
  ScopedFakeNvml fake;
  auto backend = OpenNvmlBackend(std::string(WATTCUT_FAKE_NVML_OLD_DRIVER_DIR) + "/libnvidia-ml.so.1");
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  auto energy = (*backend)->TotalEnergyMj(0);
  ASSERT_FALSE(energy.ok());
  EXPECT_EQ(energy.error().message.rfind("nvmlDeviceGetTotalEnergyConsumption is missing from ", 0), 0u);
  EXPECT_NE(energy.error().message.find("too old"), std::string::npos);
  EXPECT_FALSE(LockMemoryClockToMax(**backend, 0).ok());
  EXPECT_TRUE((*backend)->LockGpuClocks(0, 1000, 1000).ok());
}

TEST(NvmlBackendTest, DryRunOverNvmlChangesNothing) {
  ScopedFakeNvml fake;
  BackendOptions options;
  options.dry_run = true;
  std::vector<std::string> lines;
  options.dry_run_log = [&](const std::string& line) { lines.push_back(line); };
  auto backend = OpenBackend(options);
  ASSERT_TRUE(backend.ok()) << backend.error().message;
  EXPECT_EQ((*backend)->name(), "dry-run(nvml)");
  ASSERT_TRUE((*backend)->LockGpuClocks(0, 1200, 1200).ok());
  ASSERT_TRUE(LockMemoryClockToMax(**backend, 0).ok());
  ASSERT_TRUE((*backend)->SetPowerLimitMw(0, 200000).ok());
  ASSERT_TRUE((*backend)->ResetGpuClocks(0).ok());
  EXPECT_EQ(lines.size(), 4u);
  const std::string log = fake.Log();
  for (const char* setter : {"nvmlDeviceSetGpuLockedClocks", "nvmlDeviceSetMemoryLockedClocks",
                             "nvmlDeviceSetPowerManagementLimit", "nvmlDeviceResetGpuLockedClocks"}) {
    EXPECT_EQ(log.find(setter), std::string::npos) << setter;
  }
}

}  // namespace
}  // namespace wattcut
