// Issue 28's must point for one seed: with POLCA's defaults (budget, 100 % brake, 40 s
// out-of-band control) on the conversation trace over 7 days, the headroom policy holds +30 %
// servers (52 of 40, the goal) with zero brake events and all four SLOs, and POLCA,
// brake-only, uniform-cap and power-cap do not (each holds at most +25 % on seeds 1 to 3:
// docs/polca.md, "The headroom policy against POLCA and the baselines").
#include <gtest/gtest.h>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/polca/row_sweep.h"

namespace wattcut::polca {
namespace {

constexpr double kWeekS = 7 * 86400;

// A week of the trace at `path` on the A100 preset's 40-server row, seed 1, at one
// added fraction, for each policy.
Result<SweepResult> WeekAt(const std::string& path, double added, std::vector<PolicyKind> policies) {
  Result<RequestTrace> trace = RequestTrace::Read(path);
  if (!trace.ok()) return trace.error();
  SweepOptions options;
  options.added_fractions = {added};
  options.policies = std::move(policies);
  options.duration_s = kWeekS;
  options.seed = 1;
  options.jobs = 2;
  return RunSweep(*BuiltInConfig("a100"), *trace, options);
}

std::string Describe(const SweepPoint& p) {
  return PolicyName(p.run.policy) + ": " + std::to_string(p.run.brake_events) + " brake events, low P50 " +
         std::to_string(100 * p.impact.low.p50_latency) + " %, high P50 " +
         std::to_string(100 * p.impact.high.p50_latency) + " %";
}

TEST(HeadroomSizing, OnAWeekOfConversationsItHoldsAPointNoBaselineHolds) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  Result<SweepResult> sweep = WeekAt(path, 0.30,
                                     {PolicyKind::kHeadroom, PolicyKind::kPolca, PolicyKind::kBrakeOnly,
                                      PolicyKind::kUniformCap, PolicyKind::kPowerCap});
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->points.size(), 5u);
  for (const SweepPoint& p : sweep->points) {
    SCOPED_TRACE(Describe(p));
    EXPECT_EQ(p.servers, 52);
    if (p.run.policy == PolicyKind::kHeadroom) {
      EXPECT_EQ(p.run.brake_events, 0);
      EXPECT_TRUE(p.meets_slos);
      EXPECT_TRUE(p.holds);
      // It pays for that by locking only part of the week (POLCA is above T1 all of it), and saves
      // energy per token doing so.
      EXPECT_LT(p.run.level_s[1] + p.run.level_s[2] + p.run.level_s[3], 0.35 * kWeekS);
      EXPECT_LE(p.impact.energy_per_token, 0);
    } else {
      EXPECT_FALSE(p.holds);
    }
  }
}

// Issue 51's must point for one seed: on the code trace, whose prompts are longer and whose 1 s
// row power swings by a fifth of the budget within a minute, the provisioned row (+0 %) cannot
// reach its brake (40 servers at their provisioned peak are its budget): the headroom policy locks
// nothing and meets every SLO, as brake-only does. POLCA holds it too, at a low-priority cost.
TEST(HeadroomSizing, OnAWeekOfCodeTheProvisionedRowIsNeverLocked) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv");
  Result<SweepResult> sweep = WeekAt(path, 0.0, {PolicyKind::kHeadroom, PolicyKind::kPolca, PolicyKind::kBrakeOnly});
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->points.size(), 3u);
  for (const SweepPoint& p : sweep->points) {
    SCOPED_TRACE(Describe(p));
    EXPECT_EQ(p.servers, 40);
    EXPECT_TRUE(p.holds);
    if (p.run.policy == PolicyKind::kHeadroom) {
      EXPECT_EQ(p.run.level_s[1] + p.run.level_s[2] + p.run.level_s[3], 0) << "never above normal";
      EXPECT_EQ(p.impact.high.p50_latency, 0);
      EXPECT_EQ(p.impact.low.p50_latency, 0);
      EXPECT_GT(p.run.power_max, 0.95) << "although its readings come close to the budget";
    }
  }
}

}  // namespace
}  // namespace wattcut::polca
