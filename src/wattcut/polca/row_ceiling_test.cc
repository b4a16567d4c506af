#include "wattcut/polca/row_ceiling.h"

#include <gtest/gtest.h>

#include "wattcut/polca/inference_power_model.h"

namespace wattcut::polca {
namespace {

TEST(RowCeiling, AtTheProvisionedSizeTheUnlockedRowCanReachExactlyItsBudget) {
  const PolcaConfig config = *BuiltInConfig("a100");
  const RowPowerPolicy headroom(PolicyKind::kHeadroom, config.policy, config.control);
  const LevelCeilings at_40 = RowCeilings(config, headroom, {20, 20, 0});
  EXPECT_DOUBLE_EQ(at_40[0], 1.0);
  // +30 %: 52 servers at their provisioned peak are 130 % of the budget.
  EXPECT_DOUBLE_EQ(RowCeilings(config, headroom, {26, 26, 0})[0], 1.3);
}

TEST(RowCeiling, EachLevelScalesItsClassesByTheServerModelsPeakAtTheirLock) {
  const PolcaConfig config = *BuiltInConfig("a100");
  const RowPowerPolicy headroom(PolicyKind::kHeadroom, config.policy, config.control);
  const InferencePowerModel model(config);
  // The A100 model's peak is a prefill at the tokens of peak power (5.56 kW at 1410 MHz).
  auto share = [&](double mhz) {
    return model.ServerPromptW(config.gpu.prompt_tokens_for_peak, mhz) /
           model.ServerPromptW(config.gpu.prompt_tokens_for_peak, 1410);
  };
  const LevelCeilings c = RowCeilings(config, headroom, {21, 21, 0});
  const double per_server = config.row.provisioned_w_per_server / config.row_budget_w();
  EXPECT_NEAR(c[1], per_server * (21 * share(config.policy.t1_low_mhz) + 21), 1e-12);
  EXPECT_NEAR(
      c[2],
      per_server * (21 * share(config.policy.headroom_mid_low_mhz) + 21 * share(config.policy.headroom_mid_high_mhz)),
      1e-12);
  EXPECT_NEAR(c[3], per_server * (21 * share(config.policy.t2_low_mhz) + 21 * share(config.policy.t2_high_mhz)), 1e-12);
  // Deeper levels never allow more.
  EXPECT_GT(c[0], c[1]);
  EXPECT_GT(c[1], c[2]);
  EXPECT_GT(c[2], c[3]);
  // +5 % on the A100 (42 servers): the row can brake unlocked and at t1, not at the middle level.
  EXPECT_GT(c[1], 1.0);
  EXPECT_LT(c[2], 1.0);
}

TEST(RowCeiling, TrainingServersCountAtTheirProvisionedPeakAtEveryLevel) {
  const PolcaConfig config = *BuiltInConfig("h100");
  const RowPowerPolicy headroom(PolicyKind::kHeadroom, config.policy, config.control);
  const LevelCeilings with = RowCeilings(config, headroom, {10, 10, 8});
  const LevelCeilings without = RowCeilings(config, headroom, {10, 10, 0});
  for (size_t level = 0; level < 4; ++level) {
    EXPECT_NEAR(with[level] - without[level], 8 * config.row.provisioned_w_per_server / config.row_budget_w(), 1e-12);
  }
  // A policy that never locks has one ceiling at every level.
  const RowPowerPolicy brake_only(PolicyKind::kBrakeOnly, config.policy, config.control);
  const LevelCeilings flat = RowCeilings(config, brake_only, {10, 10, 8});
  EXPECT_EQ(flat[0], flat[3]);
}

}  // namespace
}  // namespace wattcut::polca
