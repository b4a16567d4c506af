// The ROCm SMI backend against the real library (Debian's librocm_smi64, installed by
// scripts/install-deps.sh) reading and writing a fake amdgpu node's sysfs files
// (fake_amdgpu/fake_amdgpu_sysfs.h), mounted where the library looks in a private mount
// namespace. Those tests need root and are skipped without it; the rules below them need neither.
#include "wattcut/gpu/rocm_smi_backend.h"

#include <gtest/gtest.h>
#include <filesystem>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_amdgpu/fake_amdgpu_sysfs.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using fake_amdgpu::FakeAmdgpuSysfs;
using fake_amdgpu::FakeGpu;

TEST(SclkGrid, EveryStepFromTheTopAndTheLowestLevel) {
  const std::vector<int> grid = SclkGridMhz({500, 1307, 2100});
  ASSERT_EQ(grid.size(), 108U);  // 2100, 2085, ..., 510 (106 steps), and 500
  EXPECT_EQ(grid.front(), 2100);
  EXPECT_EQ(grid[1], 2100 - kSclkStepMhz);
  EXPECT_EQ(grid[grid.size() - 2], 510);
  EXPECT_EQ(grid.back(), 500);
  EXPECT_EQ(std::find(grid.begin(), grid.end(), 1307), grid.end());  // the clock it runs now is no level
  EXPECT_TRUE(std::is_sorted(grid.begin(), grid.end(), std::greater<>()));
  EXPECT_EQ(std::adjacent_find(grid.begin(), grid.end()), grid.end());
  EXPECT_EQ(SclkGridMhz({}), std::vector<int>{});
  EXPECT_EQ(SclkGridMhz({1700}), std::vector<int>{1700});
}

TEST(EnergyUnwrap, CountsOnAcrossAWrapAndAReset) {
  EnergyUnwrap e;
  EXPECT_EQ(e.Add(100), 100U);
  EXPECT_EQ(e.Add(4'294'967'000), 4'294'967'000U);
  EXPECT_EQ(e.Add(50), (uint64_t{1} << 32) + 50);  // a 32-bit accumulator wrapped
  EXPECT_EQ(e.Add(70), (uint64_t{1} << 32) + 70);
  EnergyUnwrap wide;
  EXPECT_EQ(wide.Add(uint64_t{1} << 40), uint64_t{1} << 40);
  EXPECT_EQ(wide.Add(10), (uint64_t{1} << 40) + 10);  // a 64-bit one went back: the driver restarted it
}

TEST(RocmSmiLibrary, AMissingLibrarySaysWhatToInstall) {
  auto backend = OpenRocmSmiBackend("/nonexistent/librocm_smi64.so.1");
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(backend.error().message.find("cannot load ROCm SMI (/nonexistent/librocm_smi64.so.1)"), std::string::npos)
      << backend.error().message;
  EXPECT_NE(backend.error().message.find("apt-get install librocm-smi64-1"), std::string::npos);
  EXPECT_NE(backend.error().message.find("/opt/rocm/lib"), std::string::npos);
}

// One fake node per test process (ctest runs each test in its own): the namespace is entered
// before any thread starts, and the tree is rewritten for each test.
class RocmSmiOnFakeSysfs : public ::testing::Test {
 protected:
  static FakeAmdgpuSysfs* Node() {
    static FakeAmdgpuSysfs* node = [] {
      auto root = fake_amdgpu::EnterPrivateSysfs();
      if (!root.ok()) {
        why_not() = root.error().message;
        return static_cast<FakeAmdgpuSysfs*>(nullptr);
      }
      return new FakeAmdgpuSysfs(*root);
    }();
    return node;
  }
  static std::string& why_not() {
    static std::string why;
    return why;
  }

  void SetUp() override {
    FakeAmdgpuSysfs* node = Node();
    if (node == nullptr) GTEST_SKIP() << "no private /sys for the fake amdgpu node: " << why_not();
    FakeGpu second;
    second.pci_address = "0000:02:00.0";
    second.unique_id = 0x1234abcd0001;
    ASSERT_TRUE(node->Build({FakeGpu{}, second}).ok());
    auto opened = OpenRocmSmiBackend();
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    backend_ = std::move(opened).value();
  }
  void TearDown() override {
    backend_.reset();  // rsmi_shut_down before the next tree
  }

  FakeAmdgpuSysfs& node() { return *Node(); }
  std::unique_ptr<GpuBackend> backend_;
};

TEST_F(RocmSmiOnFakeSysfs, DiscoversEachGpuWithItsPciAddressAndId) {
  EXPECT_EQ(backend_->name(), "rocm-smi");
  ASSERT_EQ(*backend_->DeviceCount(), 2);
  auto first = backend_->Info(0);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->pci_address, "0000:01:00.0");
  EXPECT_EQ(first->uuid, "AMD-GPU-00001234abcd0000");
  EXPECT_FALSE(first->name.empty());
  EXPECT_NE(first->name, "0x1002");  // the vendor's number is no name
  EXPECT_EQ(backend_->Info(1)->pci_address, "0000:02:00.0");
  EXPECT_EQ(backend_->Info(1)->uuid, "AMD-GPU-00001234abcd0001");
  EXPECT_FALSE(backend_->Info(2).ok());
}

TEST_F(RocmSmiOnFakeSysfs, ReadsTheClockLevelsThePowerAndTheEnergyCounter) {
  EXPECT_EQ(*backend_->SupportedMemoryClocksMhz(0), (std::vector<int>{1300, 900}));
  const std::vector<int> sm = *backend_->SupportedGraphicsClocksMhz(0, 1300);
  EXPECT_EQ(sm, SclkGridMhz({500, 1300, 2100}));
  EXPECT_EQ(*SupportedSmClocksMhz(*backend_, 0), sm);
  EXPECT_EQ(*backend_->SmClockMhz(0), 2100);
  EXPECT_EQ(*backend_->PowerUsageMw(0), 550'000);
  auto fields = backend_->PowerFields(0);
  ASSERT_TRUE(fields.ok());
  EXPECT_FALSE(fields->instant_mw.has_value());
  EXPECT_EQ(fields->average_mw, 550'000);
  // 1,000,000 counts of 15.3 uJ.
  EXPECT_EQ(*backend_->TotalEnergyMj(0), 15'300);
  ASSERT_TRUE(node().SetEnergyCounts(0, 3'000'000).ok());
  EXPECT_EQ(*backend_->TotalEnergyMj(0), 45'900);
  EXPECT_EQ(backend_->PersistenceMode(0).error().code, ErrorCode::kNotFound);
}

TEST_F(RocmSmiOnFakeSysfs, ASmLockIsTheManualLevelAndARangeTheDriverIsTold) {
  Status locked = backend_->LockGpuClocks(0, 800, 1200);
  ASSERT_TRUE(locked.ok()) << locked.error().message;
  EXPECT_EQ(node().Read(0, "power_dpm_force_performance_level"), "manual");
  EXPECT_EQ(node().OdCommands(0), (std::vector<std::string>{"s 0 800\n", "s 1 1200\n", "c"}));
  EXPECT_TRUE(node().OdCommands(1).empty());
  ASSERT_TRUE(backend_->ResetGpuClocks(0).ok());
  EXPECT_EQ(node().Read(0, "power_dpm_force_performance_level"), "auto");
}

TEST_F(RocmSmiOnFakeSysfs, ALockOutsideTheClockRangeIsRefusedBeforeTheDriverIsTold) {
  auto refused = backend_->LockGpuClocks(0, 400, 1200);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message,
            "cannot lock GPU 0 SM clocks to 400-1200 MHz: the GPU's system clock runs from 500 to 2100 MHz");
  EXPECT_EQ(node().Read(0, "power_dpm_force_performance_level"), "auto\n");
  EXPECT_TRUE(node().OdCommands(0).empty());
  EXPECT_FALSE(backend_->LockGpuClocks(0, 1200, 800).ok());
  EXPECT_FALSE(backend_->LockMemoryClocks(0, 1000, 1200).ok());  // no memory level there
}

// Where a driver lists its soft limits as the lowest and highest levels while a range is set, the
// range read first stays the GPU's: the grid does not shrink, and a lock outside the old one is taken.
TEST_F(RocmSmiOnFakeSysfs, TheClockRangeIsReadOnceAndDoesNotFollowALocksListing) {
  const std::vector<int> grid = *backend_->SupportedGraphicsClocksMhz(0, 1300);
  ASSERT_TRUE(backend_->LockGpuClocks(0, 800, 1200).ok());
  ASSERT_TRUE(node().Write(0, "pp_dpm_sclk", fake_amdgpu::DpmLevels({800, 1200}, 1)).ok());
  EXPECT_EQ(*backend_->SupportedGraphicsClocksMhz(0, 1300), grid);
  EXPECT_TRUE(backend_->LockGpuClocks(0, 1500, 2100).ok());
  EXPECT_EQ(node().OdCommands(0).size(), 6U);
}

TEST_F(RocmSmiOnFakeSysfs, AResetOfOneClockPutsTheOtherClocksLockBack) {
  ASSERT_TRUE(backend_->LockMemoryClocks(0, 1300, 1300).ok());
  EXPECT_EQ(node().Read(0, "pp_dpm_mclk"), "1 ");  // the mask of level 1, as ROCm SMI writes it
  ASSERT_TRUE(node().Write(0, "pp_dpm_mclk", fake_amdgpu::DpmLevels({900, 1300}, 1)).ok());
  ASSERT_TRUE(backend_->LockGpuClocks(0, 1000, 2100).ok());
  ASSERT_TRUE(backend_->ResetMemoryClocks(0).ok());
  // The driver's one level went back to auto, then the SM range was asked again.
  EXPECT_EQ(node().OdCommands(0),
            (std::vector<std::string>{"s 0 1000\n", "s 1 2100\n", "c", "s 0 1000\n", "s 1 2100\n", "c"}));
  EXPECT_EQ(node().Read(0, "power_dpm_force_performance_level"), "manual");
  ASSERT_TRUE(backend_->ResetGpuClocks(0).ok());
  EXPECT_EQ(node().Read(0, "power_dpm_force_performance_level"), "auto");
}

TEST_F(RocmSmiOnFakeSysfs, ThePowerCapIsReadAndSetInMicrowatts) {
  auto limits = backend_->PowerLimits(0);
  ASSERT_TRUE(limits.ok()) << limits.error().message;
  EXPECT_EQ(limits->default_mw, 750'000);
  EXPECT_EQ(limits->max_mw, 750'000);
  EXPECT_EQ(*backend_->PowerLimitMw(0), 750'000);
  ASSERT_TRUE(backend_->SetPowerLimitMw(0, 600'000).ok());
  EXPECT_EQ(node().Read(0, "hwmon/hwmon0/power1_cap"), "600000000");
  EXPECT_EQ(*backend_->PowerLimitMw(0), 600'000);
  ASSERT_TRUE(ResetPowerLimit(*backend_, 0).ok());
  EXPECT_EQ(node().Read(0, "hwmon/hwmon0/power1_cap"), "750000000");
  EXPECT_FALSE(backend_->SetPowerLimitMw(0, 0).ok());
}

TEST_F(RocmSmiOnFakeSysfs, AnUnreadableDriverFileIsADeviceErrorNamingTheCall) {
  std::error_code ec;
  fs::remove(node().DeviceDir(0) / "hwmon/hwmon0/power1_average", ec);
  auto power = backend_->PowerUsageMw(0);
  ASSERT_FALSE(power.ok());
  EXPECT_NE(power.error().message.find("rsmi_dev_power_ave_get(GPU 0)"), std::string::npos) << power.error().message;
  EXPECT_TRUE(backend_->PowerUsageMw(1).ok());
}

}  // namespace
}  // namespace wattcut
