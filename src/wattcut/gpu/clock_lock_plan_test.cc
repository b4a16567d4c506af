// Clock locks planned, applied and rolled back on the simulated backend (whose state the test
// reads back) and on the real NVML backend over the fake libnvidia-ml.so.1 (whose state file
// injects the failing step and shows what the GPUs were left with).
#include "wattcut/gpu/clock_lock_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_nvml/fake_nvml_backend_testing.h"
#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {
namespace {

using fake_nvml::kLibraryPathSet;
using fake_nvml::OpenFakeNvmlBackend;
using fake_nvml::ScopedFakeNvml;

std::string Value(const fake_nvml::State& state, const std::string& key) {
  auto it = state.find(key);
  return it == state.end() ? "" : it->second;
}

class ClockLockPlanTest : public ::testing::Test {
 protected:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<SimulatedBackend> gpus_ = std::move(SimulatedBackend::Create("a100-sxm", 2, clock_)).value();
};

ClockLockRequest SmLock(int min_mhz, int max_mhz) {
  ClockLockRequest request;
  request.sm_min_mhz = min_mhz;
  request.sm_max_mhz = max_mhz;
  return request;
}

ClockLockRequest MemoryLock() {
  ClockLockRequest request;
  request.memory_max = true;
  return request;
}

TEST_F(ClockLockPlanTest, ARequestThatCannotBeLockedIsRefusedNamingItsFields) {
  auto check = [&](const ClockLockRequest& request, const std::string& message) {
    auto plans = PlanClockLock(*gpus_, {0}, request);
    ASSERT_FALSE(plans.ok()) << message;
    EXPECT_EQ(plans.error().message, message);
  };
  check(ClockLockRequest{}, "nothing to lock: the request sets no SM clock, memory clock or power limit");
  check(SmLock(-5, 0), "sm_min_mhz and sm_max_mhz must be positive MHz");
  check(SmLock(0, 1200), "sm_max_mhz needs sm_min_mhz (the lower bound)");
  check(SmLock(1200, 1000), "sm_max_mhz 1000 is below sm_min_mhz 1200");
  check(SmLock(1200, 0), "sm_max_mhz 0 is below sm_min_mhz 1200");
  for (double w : std::vector<double>{0.0, -3.0, 1e300, std::nan(""), INFINITY}) {
    ClockLockRequest power;
    power.power_limit_w = w;
    auto plans = PlanClockLock(*gpus_, {0}, power);
    ASSERT_FALSE(plans.ok()) << w;
    EXPECT_EQ(plans.error().message.rfind("power_limit_w: expected a positive number of watts below 1000000, got ", 0),
              0u)
        << plans.error().message;
  }
  ClockLockRequest both = SmLock(1200, 1000);
  both.power_limit_w = 1e300;
  check(both,
        "sm_max_mhz 1000 is below sm_min_mhz 1200; power_limit_w: expected a positive number of watts below 1000000, "
        "got 1e+300");
  EXPECT_FALSE(gpus_->gpu_clocks_locked(0));
}

TEST_F(ClockLockPlanTest, EveryProblemOnEveryGpuIsFoundBeforeAnythingChanges) {
  auto range = PlanClockLock(*gpus_, {0, 1}, SmLock(5000, 5000));
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().message,
            "GPU 0: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz; "
            "GPU 1: SM clocks 5000-5000 MHz are outside the supported 210-1410 MHz (nothing was changed)");
  ClockLockRequest request = SmLock(1200, 1200);
  request.power_limit_w = 10;
  auto power = PlanClockLock(*gpus_, {1}, request);
  ASSERT_FALSE(power.ok());
  EXPECT_EQ(power.error().message,
            "GPU 1: power limit 10.0 W is outside the allowed 250.0-500.0 W (nothing was changed)");
  EXPECT_FALSE(gpus_->gpu_clocks_locked(0));
  EXPECT_FALSE(gpus_->gpu_clocks_locked(1));
  EXPECT_EQ(*gpus_->PowerLimitMw(1), 500000);
  auto missing = PlanClockLock(*gpus_, {2}, SmLock(1200, 1200));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "GPU 2: cannot read the supported SM clocks: GPU 2 does not exist (2 GPUs) (nothing was changed)");
}

TEST_F(ClockLockPlanTest, APlanCarriesWhatTheGpuSaysAndWhatUndoingNeeds) {
  ASSERT_TRUE(gpus_->SetPowerLimitMw(1, 400000).ok());
  ClockLockRequest request = SmLock(1200, 1300);
  request.memory_max = true;
  request.power_limit_w = 300.0004;  // to the nearest milliwatt
  auto plans = PlanClockLock(*gpus_, {1, 0}, request);
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  ASSERT_EQ(plans->size(), 2u);
  const ClockLockPlan& plan = (*plans)[0];
  EXPECT_EQ(plan.gpu, 1);
  EXPECT_EQ(plan.sm_min_mhz, 1200);
  EXPECT_EQ(plan.sm_max_mhz, 1300);
  EXPECT_EQ(plan.memory_mhz, 1593);
  EXPECT_EQ(plan.power_limit_mw, 300000);
  EXPECT_EQ(plan.previous_power_limit_mw, 400000);
  EXPECT_EQ((*plans)[1].previous_power_limit_mw, 500000);

  auto memory_only = PlanClockLock(*gpus_, {0}, MemoryLock());
  ASSERT_TRUE(memory_only.ok());
  EXPECT_EQ((*memory_only)[0].sm_min_mhz, 0);
  EXPECT_FALSE((*memory_only)[0].power_limit_mw.has_value());
  EXPECT_EQ((*memory_only)[0].memory_mhz, 1593);
}

TEST_F(ClockLockPlanTest, ApplyingReportsEachChangeInOrder) {
  ClockLockRequest request = SmLock(1200, 1200);
  request.memory_max = true;
  request.power_limit_w = 300;
  auto plans = PlanClockLock(*gpus_, {0, 1}, request);
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  std::vector<ClockLockChange> changes;
  Status applied = ApplyClockLock(*gpus_, *plans, [&](const ClockLockChange& c) { changes.push_back(c); });
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  ASSERT_EQ(changes.size(), 6u);
  EXPECT_EQ(changes[0].kind, ClockLockChange::kSmClocks);
  EXPECT_EQ(changes[0].gpu, 0);
  EXPECT_EQ(changes[0].sm_clock_before_mhz, 1410);
  EXPECT_EQ(changes[0].sm_clock_after_mhz, 1200);
  EXPECT_EQ(changes[1].kind, ClockLockChange::kMemoryClocks);
  EXPECT_EQ(changes[1].memory_mhz, 1593);
  EXPECT_EQ(changes[2].kind, ClockLockChange::kPowerLimit);
  EXPECT_EQ(changes[2].power_limit_mw, 300000);
  EXPECT_EQ(changes[2].previous_power_limit_mw, 500000);
  EXPECT_EQ(changes[3].gpu, 1);
  for (int gpu : {0, 1}) {
    EXPECT_EQ(*gpus_->SmClockMhz(gpu), 1200);
    EXPECT_TRUE(gpus_->memory_clocks_locked(gpu));
    EXPECT_EQ(*gpus_->PowerLimitMw(gpu), 300000);
  }

  // Undoing it all restores every GPU, newest change first.
  EXPECT_EQ(RollBackClockLock(*gpus_, changes),
            "rolled back: GPU 1 power limit restored to 500.0 W, GPU 1 memory clocks reset, GPU 1 SM clocks reset, "
            "GPU 0 power limit restored to 500.0 W, GPU 0 memory clocks reset, GPU 0 SM clocks reset");
  for (int gpu : {0, 1}) {
    EXPECT_FALSE(gpus_->gpu_clocks_locked(gpu));
    EXPECT_FALSE(gpus_->memory_clocks_locked(gpu));
    EXPECT_EQ(*gpus_->PowerLimitMw(gpu), 500000);
  }
  EXPECT_EQ(RollBackClockLock(*gpus_, {}), "nothing had been changed");
}

TEST(ClockLockPlanNvmlTest, AStepThatFailsUndoesTheStepsAlreadyApplied) {
  ASSERT_TRUE(kLibraryPathSet);
  // GPU 0 had its limit lowered to 350 W before; GPU 1 refuses clock locks.
  ScopedFakeNvml fake(
      fake_nvml::State{{"gpu0.power_limit_mw", "350000"}, {"gpu1.fail.nvmlDeviceSetGpuLockedClocks", "4"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  ClockLockRequest request = SmLock(1200, 1200);
  request.power_limit_w = 300;
  auto plans = PlanClockLock(*backend, {0, 1}, request);
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  int changes = 0;
  Status applied = ApplyClockLock(*backend, *plans, [&](const ClockLockChange&) { ++changes; });
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(changes, 2);  // GPU 0's SM clocks and power limit
  const std::string& message = applied.error().message;
  EXPECT_EQ(message.rfind("nvmlDeviceSetGpuLockedClocks(GPU 1, 1200, 1200)", 0), 0u) << message;
  const std::string rolled_back = "; rolled back: GPU 0 power limit restored to 350.0 W, GPU 0 SM clocks reset";
  ASSERT_GE(message.size(), rolled_back.size());
  EXPECT_EQ(message.substr(message.size() - rolled_back.size()), rolled_back) << message;
  const fake_nvml::State state = fake.Read();
  EXPECT_EQ(Value(state, "gpu0.locked_max"), "0");
  EXPECT_EQ(Value(state, "gpu0.power_limit_mw"), "350000");
  EXPECT_EQ(Value(state, "gpu1.locked_max"), "");
}

TEST(ClockLockPlanNvmlTest, AFirstStepThatFailsHasNothingToUndo) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake(fake_nvml::State{{"gpu0.fail.nvmlDeviceSetMemoryLockedClocks", "3"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  auto plans = PlanClockLock(*backend, {0}, MemoryLock());
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  Status applied = ApplyClockLock(*backend, *plans, nullptr);
  ASSERT_FALSE(applied.ok());
  const std::string nothing = "; nothing had been changed";
  const std::string& message = applied.error().message;
  ASSERT_GE(message.size(), nothing.size());
  EXPECT_EQ(message.substr(message.size() - nothing.size()), nothing) << message;
}

TEST(ClockLockPlanNvmlTest, AReadingThePlanNeedsThatFailsIsAProblem) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake(fake_nvml::State{{"fail.nvmlDeviceGetPowerManagementLimit", "3"},
                                       {"fail.nvmlDeviceGetSupportedMemoryClocks", "3"}});
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  ClockLockRequest request = SmLock(1200, 1200);
  request.memory_max = true;
  request.power_limit_w = 300;
  auto plans = PlanClockLock(*backend, {1}, request);
  ASSERT_FALSE(plans.ok());
  const std::string& message = plans.error().message;
  EXPECT_EQ(message.rfind("GPU 1: cannot read the supported SM clocks: nvmlDeviceGetSupportedMemoryClocks", 0), 0u)
      << message;
  EXPECT_NE(message.find("; GPU 1: cannot read the memory clocks: nvmlDeviceGetSupportedMemoryClocks"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("; GPU 1: cannot read the power limit now (needed to undo a failed lock): "
                         "nvmlDeviceGetPowerManagementLimit"),
            std::string::npos)
      << message;
  EXPECT_EQ(fake.Log().find("nvmlDeviceSet"), std::string::npos);
}

TEST(ClockLockPlanNvmlTest, ARollbackThatCannotUndoAStepSaysSo) {
  ASSERT_TRUE(kLibraryPathSet);
  ScopedFakeNvml fake;
  auto backend = OpenFakeNvmlBackend();
  ASSERT_NE(backend, nullptr);
  ClockLockRequest request = SmLock(1000, 1000);
  request.power_limit_w = 250;
  auto plans = PlanClockLock(*backend, {0}, request);
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  std::vector<ClockLockChange> changes;
  ASSERT_TRUE(ApplyClockLock(*backend, *plans, [&](const ClockLockChange& c) { changes.push_back(c); }).ok());
  fake.Set("fail.nvmlDeviceResetGpuLockedClocks", "4");
  const std::string text = RollBackClockLock(*backend, changes);
  EXPECT_EQ(text.rfind("rolled back: GPU 0 power limit restored to 400.0 W; rollback incomplete: GPU 0 SM clocks "
                       "reset FAILED: nvmlDeviceResetGpuLockedClocks",
                       0),
            0u)
      << text;
  const std::string hint = " (run `wattcut gpu reset --power-limit`)";
  ASSERT_GE(text.size(), hint.size());
  EXPECT_EQ(text.substr(text.size() - hint.size()), hint);
  EXPECT_EQ(Value(fake.Read(), "gpu0.power_limit_mw"), "400000");
  EXPECT_EQ(Value(fake.Read(), "gpu0.locked_max"), "1000");
}

}  // namespace
}  // namespace wattcut
