#include "wattcut/gpu/simulated_backend.h"

#include <gtest/gtest.h>

#include <memory>

namespace wattcut {
namespace {

class SimulatedBackendTest : public ::testing::Test {
 protected:
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<SimulatedBackend> backend_ = std::move(SimulatedBackend::Create("a100-sxm", 2, clock_)).value();
  const GpuModel& model_ = **FindGpuModel("a100-sxm");
};

TEST_F(SimulatedBackendTest, DiscoversModelledGpus) {
  EXPECT_EQ(*backend_->DeviceCount(), 2);
  auto info = backend_->Info(1);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->index, 1);
  EXPECT_NE(info->name.find("a100-sxm"), std::string::npos);
  EXPECT_NE(backend_->Info(0)->uuid, info->uuid);
  auto clocks = SupportedSmClocksMhz(*backend_, 0);
  ASSERT_TRUE(clocks.ok());
  EXPECT_EQ(*clocks, model_.SupportedFreqsMhz());
  EXPECT_EQ(*MaxMemoryClockMhz(*backend_, 0), 1593);
  EXPECT_FALSE(backend_->SupportedGraphicsClocksMhz(0, 1000).ok());
}

TEST_F(SimulatedBackendTest, RejectsUnknownGpus) {
  auto info = backend_->Info(2);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().message, "GPU 2 does not exist (2 GPUs)");
  EXPECT_FALSE(backend_->LockGpuClocks(-1, 1000, 1000).ok());
  EXPECT_FALSE(backend_->TotalEnergyMj(5).ok());
  EXPECT_FALSE(SimulatedBackend::Create("h100", 1).ok());
  EXPECT_FALSE(SimulatedBackend::Create("a40", 0).ok());
}

TEST_F(SimulatedBackendTest, LocksAndResetsClocks) {
  EXPECT_EQ(*backend_->SmClockMhz(0), 1410);
  ASSERT_TRUE(backend_->LockGpuClocks(0, 1200, 1200).ok());
  EXPECT_EQ(*backend_->SmClockMhz(0), 1200);
  EXPECT_EQ(*backend_->SmClockMhz(1), 1410);
  EXPECT_TRUE(backend_->gpu_clocks_locked(0));
  ASSERT_TRUE(backend_->ResetGpuClocks(0).ok());
  EXPECT_FALSE(backend_->gpu_clocks_locked(0));
  EXPECT_EQ(*backend_->SmClockMhz(0), 1410);

  Status too_high = backend_->LockGpuClocks(0, 1500, 1500);
  ASSERT_FALSE(too_high.ok());
  EXPECT_NE(too_high.error().message.find("supported 210-1410 MHz"), std::string::npos);
  EXPECT_FALSE(backend_->LockGpuClocks(0, 1300, 1200).ok());

  ASSERT_TRUE(LockMemoryClockToMax(*backend_, 1).ok());
  EXPECT_TRUE(backend_->memory_clocks_locked(1));
  EXPECT_FALSE(backend_->LockMemoryClocks(1, 1000, 1000).ok());
  ASSERT_TRUE(backend_->ResetMemoryClocks(1).ok());
  EXPECT_FALSE(backend_->memory_clocks_locked(1));
}

TEST_F(SimulatedBackendTest, PowerLimitsFollowTheModel) {
  auto limits = backend_->PowerLimits(0);
  ASSERT_TRUE(limits.ok());
  EXPECT_EQ(limits->default_mw, 500000);
  EXPECT_TRUE(backend_->SetPowerLimitMw(0, 300000).ok());
  EXPECT_FALSE(backend_->SetPowerLimitMw(0, 600000).ok());
  EXPECT_TRUE(ResetPowerLimit(*backend_, 0).ok());
}

TEST_F(SimulatedBackendTest, EnergyCounterIntegratesIdleAndBusyPower) {
  const int64_t start_mj = *backend_->TotalEnergyMj(0);
  EXPECT_EQ(*backend_->PowerUsageMw(0), static_cast<int64_t>(model_.idle_power_w * 1000));
  clock_->AdvanceS(2.0);  // idle
  EXPECT_NEAR(static_cast<double>(*backend_->TotalEnergyMj(0) - start_mj), 2.0 * model_.idle_power_w * 1000, 1.0);

  const WorkloadPoint at_fmax = model_.middle_stage.backward;
  ASSERT_TRUE(backend_->LockGpuClocks(0, 1005, 1005).ok());
  const int64_t before_mj = *backend_->TotalEnergyMj(0);
  auto took = backend_->Run(0, InstructionKind::kBackward, at_fmax);
  ASSERT_TRUE(took.ok());
  const double expected_s = at_fmax.time_s * model_.RelativeTime(InstructionKind::kBackward, 1005);
  const double expected_j = expected_s * at_fmax.power_w * model_.RelativePower(InstructionKind::kBackward, 1005);
  EXPECT_NEAR(*took, expected_s, 1e-9);
  EXPECT_NEAR(clock_->NowS(), 2.0 + expected_s, 1e-9);
  EXPECT_NEAR(static_cast<double>(*backend_->TotalEnergyMj(0) - before_mj), expected_j * 1000, 1.0);
  // Back to idle afterwards; the other GPU stayed idle throughout.
  EXPECT_EQ(*backend_->PowerUsageMw(0), static_cast<int64_t>(model_.idle_power_w * 1000));
  EXPECT_NEAR(static_cast<double>(*backend_->TotalEnergyMj(1)), clock_->NowS() * model_.idle_power_w * 1000, 1.0);
}

TEST_F(SimulatedBackendTest, RunsOnTheRealClockForTheirModelledTime) {
  auto real = std::move(SimulatedBackend::Create("a40", 1)).value();
  const WorkloadPoint at_fmax{.time_s = 0.004, .power_w = 250};
  const double start = real->clock().NowS();
  auto took = real->Run(0, InstructionKind::kForward, at_fmax);
  ASSERT_TRUE(took.ok());
  EXPECT_GE(*took, 0.004);
  EXPECT_GE(real->clock().NowS() - start, 0.004);
}

}  // namespace
}  // namespace wattcut
