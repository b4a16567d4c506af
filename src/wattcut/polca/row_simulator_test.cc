#include "wattcut/polca/row_simulator.h"

#include <gtest/gtest.h>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/polca/inference_power_model.h"
#include "wattcut/polca/synthetic_trace_testing.h"

namespace wattcut::polca {
namespace {

// A synthetic trace: one request every 0.2 s for an hour, mixed lengths.
using testing::SyntheticHourAtFiveRequestsASecond;

RowRunOptions Options(PolicyKind kind, int servers, double hours) {
  RowRunOptions o;
  o.policy = kind;
  o.servers = servers;
  o.duration_s = hours * 3600;
  o.seed = 5;
  return o;
}

TEST(RowSimulator, ConservesRequestsAndIsReproducible) {
  PolcaConfig config = *BuiltInConfig("a100");
  RequestTrace trace = SyntheticHourAtFiveRequestsASecond();
  auto a = SimulateRow(config, trace, Options(PolicyKind::kPolca, 10, 3));
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_GT(a->arrivals, 1000);
  EXPECT_EQ(a->high.completed + a->low.completed + a->unfinished, a->arrivals);
  EXPECT_EQ(a->high.servers + a->low.servers, 10);
  EXPECT_EQ(a->low.servers, 5);
  EXPECT_EQ(a->power_samples.size(), 3u * 3600);
  EXPECT_NEAR(a->level_s[0] + a->level_s[1] + a->level_s[2] + a->level_s[3], 3 * 3600, 1e-6);
  // Energy equals the integral of the readings.
  double sum = 0;
  for (float v : a->power_samples) sum += v;
  EXPECT_NEAR(a->energy_kwh, sum * a->budget_w / 3.6e6, 1e-3 * a->energy_kwh);

  auto b = SimulateRow(config, trace, Options(PolicyKind::kPolca, 10, 3));
  EXPECT_EQ(a->arrivals, b->arrivals);
  EXPECT_EQ(a->high.latency_p99_s, b->high.latency_p99_s);
  EXPECT_EQ(a->power_samples, b->power_samples);
  RowRunOptions other = Options(PolicyKind::kPolca, 10, 3);
  other.seed = 6;
  EXPECT_NE(SimulateRow(config, trace, other)->power_samples, a->power_samples);
}

TEST(RowSimulator, PowerStaysBetweenIdleAndPeakOfTheServers) {
  PolcaConfig config = *BuiltInConfig("a100");
  auto r = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kNone, 8, 2));
  ASSERT_TRUE(r.ok());
  InferencePowerModel m(config);
  double idle = 8 * m.ServerIdleW() / r->budget_w;
  double peak = 8 * m.ServerPromptW(1e9, 1410) / r->budget_w;
  for (float v : r->power_samples) {
    ASSERT_GE(v, idle - 1e-6);
    ASSERT_LE(v, peak + 1e-6);
  }
  EXPECT_EQ(r->brake_events, 0);
  EXPECT_EQ(r->actions.size(), 0u);
}

TEST(RowSimulator, OverloadedRowBrakesWithoutControlButNotWithPolca) {
  PolcaConfig config = *BuiltInConfig("a100");
  config.row.baseline_servers = 10;
  config.workload.diurnal_trough = 1.0;  // flat: always at the peak rate
  config.row.provisioned_w_per_server = 5500;
  // 13 servers on a 10-server budget.
  auto brake_only = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kBrakeOnly, 13, 2));
  auto polca = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kPolca, 13, 2));
  auto none = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kNone, 13, 2));
  ASSERT_TRUE(brake_only.ok() && polca.ok() && none.ok());
  EXPECT_GT(none->power_max, 1.0);
  EXPECT_GT(brake_only->brake_events, 0);
  EXPECT_GT(brake_only->brake_active_s, 0);
  EXPECT_LT(polca->power_max, none->power_max);
  EXPECT_EQ(polca->brake_events, 0);
  EXPECT_GT(polca->level_s[static_cast<size_t>(PolicyLevel::kT1)] + polca->level_s[2] + polca->level_s[3], 0);
  // Low priority pays before high priority does.
  RunImpact impact = CompareRuns(*polca, *none);
  EXPECT_GE(impact.low.p50_latency, impact.high.p50_latency);
}

TEST(RowSimulator, RejectsBadOptions) {
  PolcaConfig config = *BuiltInConfig("a100");
  RowRunOptions o = Options(PolicyKind::kPolca, 0, 1);
  EXPECT_NE(SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), o)
                .error()
                .message.find("the row must be between 1 and 10000 servers"),
            std::string::npos);
  o = Options(PolicyKind::kPolca, 4, 0);
  EXPECT_NE(SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), o).error().message.find("duration"),
            std::string::npos);
  config.policy.t1 = 0.95;
  EXPECT_NE(SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kPolca, 4, 1))
                .error()
                .message.find("t1"),
            std::string::npos);
}

TEST(RowSimulator, SloCheckUsesThePaperLimits) {
  RunImpact ok{{0.009, 0.049, 0}, {0.049, 0.49, 0}};
  EXPECT_TRUE(MeetsSlos(ok));
  RunImpact high_p50 = ok;
  high_p50.high.p50_latency = 0.011;
  EXPECT_FALSE(MeetsSlos(high_p50));
  RunImpact low_p99 = ok;
  low_p99.low.p99_latency = 0.51;
  EXPECT_FALSE(MeetsSlos(low_p99));
}

// Requests left unfinished: more than 1 % of the arrivals beyond the unconstrained run's misses;
// an unconstrained run that leaves more than half unfinished gives no verdict at all.
TEST(RowSimulator, UnfinishedRequestsCountAgainstTheSlos) {
  RunImpact ok{{0.0, 0.0, 0}, {0.0, 0.0, 0}};
  ok.arrivals = 10000;
  ok.reference_unfinished = 40;  // in flight when the run ended
  ok.extra_unfinished = 100;
  EXPECT_EQ(JudgeSlos(ok), SloVerdict::kMet);
  RunImpact behind = ok;
  behind.extra_unfinished = 101;
  EXPECT_EQ(JudgeSlos(behind), SloVerdict::kMissed);
  EXPECT_EQ(SloVerdictText(behind).rfind("missed: the run leaves 101 more of the 10000 requests unfinished", 0), 0u)
      << SloVerdictText(behind);
  RunImpact overloaded = ok;
  overloaded.reference_unfinished = 5001;
  EXPECT_EQ(JudgeSlos(overloaded), SloVerdict::kCannotJudge);
  EXPECT_FALSE(MeetsSlos(overloaded));
  EXPECT_EQ(SloVerdictName(JudgeSlos(overloaded)), "cannot judge");
  EXPECT_NE(SloVerdictText(overloaded).find("leaves 5001 of the 10000 requests unfinished"), std::string::npos);
}

TEST(RowSimulator, EnergyPerTokenIsTheRowsEnergyOverBothClassesTokens) {
  RowRunResult reference;
  reference.energy_kwh = 1;
  reference.high.generated_tokens = 600'000;
  reference.low.generated_tokens = 600'000;
  EXPECT_DOUBLE_EQ(EnergyPerServedTokenJ(reference), 3.0) << "3.6 MJ over 1.2 M tokens";
  RowRunResult run = reference;
  run.energy_kwh = 0.9;
  run.low.generated_tokens = 300'000;  // a quarter fewer tokens for a tenth less energy
  EXPECT_DOUBLE_EQ(EnergyPerServedTokenJ(run), 3.6);
  EXPECT_NEAR(CompareRuns(run, reference).energy_per_token, 0.2, 1e-12);
  EXPECT_EQ(EnergyPerServedTokenJ(RowRunResult{}), 0) << "nothing served: no energy per token, not a division by 0";
  EXPECT_EQ(CompareRuns(run, RowRunResult{}).energy_per_token, 0);
}

TEST(RowSimulator, BaselineRowOnTheConversationTracePeaksNearPaperLevel) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  auto trace = RequestTrace::Read(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  PolcaConfig config = *BuiltInConfig("a100");
  RowRunOptions o = Options(PolicyKind::kNone, 40, 24);
  o.seed = 1;
  auto r = SimulateRow(config, *trace, o);
  ASSERT_TRUE(r.ok());
  // Calibration target of POLCA.md section 1: a 40-server row peaks near 79 %.
  EXPECT_NEAR(r->power_max, 0.79, 0.03);
  EXPECT_EQ(r->unfinished * 1000 < r->arrivals, true);  // the row keeps up with its load
}

}  // namespace
}  // namespace wattcut::polca
