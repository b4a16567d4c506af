#include "wattcut/polca/arrival_expansion.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wattcut::polca {
namespace {

RequestTrace SmallTrace() {
  std::vector<TraceRequest> requests;
  for (int i = 0; i < 3600; ++i) requests.push_back({i * 1.0, 100 + i % 7, 10 + i % 5});
  return *RequestTrace::FromRequests(requests, "uniform");
}

TEST(DiurnalEnvelope, PeaksAtPeakHourAndDipsToTrough) {
  ExpansionOptions o;
  o.diurnal_trough = 0.4;
  o.peak_hour = 14;
  EXPECT_NEAR(DiurnalEnvelope(o, 14 * 3600), 1.0, 1e-12);
  EXPECT_NEAR(DiurnalEnvelope(o, 2 * 3600), 0.4, 1e-12);
  EXPECT_NEAR(DiurnalEnvelope(o, (24 + 14) * 3600), 1.0, 1e-12);
  o.weekend_factor = 0.5;
  EXPECT_NEAR(DiurnalEnvelope(o, (5 * 24 + 14) * 3600), 0.5, 1e-12);  // day 6
  EXPECT_NEAR(DiurnalEnvelope(o, (7 * 24 + 14) * 3600), 1.0, 1e-12);  // next Monday
}

TEST(ArrivalExpansion, FollowsTheEnvelopeRateAndIsSorted) {
  RequestTrace trace = SmallTrace();
  ExpansionOptions o;
  o.duration_s = 86400;
  o.peak_rate_per_s = 10;
  o.diurnal_trough = 0.5;
  o.seed = 3;
  ArrivalExpansion expansion(trace, o);
  EXPECT_DOUBLE_EQ(expansion.block_s(), 3600);
  std::vector<Arrival> all = expansion.All();
  // Expected count: the mean of the envelope (0.75) * 10/s * 1 day.
  EXPECT_NEAR(static_cast<double>(all.size()), 0.75 * 10 * 86400, 0.01 * 0.75 * 10 * 86400);
  for (size_t i = 1; i < all.size(); ++i) ASSERT_LE(all[i - 1].time_s, all[i].time_s);
  EXPECT_GE(all.front().time_s, 0);
  EXPECT_LT(all.back().time_s, 86400);
  // Peak hour (14:00-15:00) has about twice the arrivals of the trough hour (02:00-03:00).
  auto count = [&](double from, double to) {
    return std::count_if(all.begin(), all.end(), [&](const Arrival& a) { return a.time_s >= from && a.time_s < to; });
  };
  double ratio = static_cast<double>(count(14 * 3600 - 1800, 14 * 3600 + 1800)) /
                 static_cast<double>(count(2 * 3600 - 1800, 2 * 3600 + 1800));
  EXPECT_NEAR(ratio, 1.0 / 0.5, 0.1);
  // Requests keep the trace's token counts; about half are low priority.
  int64_t low = 0;
  for (const Arrival& a : all) {
    ASSERT_GE(a.context_tokens, 100);
    ASSERT_LE(a.context_tokens, 106);
    low += a.priority == Priority::kLow;
  }
  EXPECT_NEAR(static_cast<double>(low) / static_cast<double>(all.size()), 0.5, 0.01);
}

TEST(ArrivalExpansion, IsReproducibleFromItsSeed) {
  RequestTrace trace = SmallTrace();
  ExpansionOptions o;
  o.duration_s = 4 * 3600;
  o.peak_rate_per_s = 3;
  o.seed = 11;
  auto a = ArrivalExpansion(trace, o).All();
  auto b = ArrivalExpansion(trace, o).All();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].time_s, b[i].time_s);
    ASSERT_EQ(a[i].priority, b[i].priority);
  }
  o.seed = 12;
  auto c = ArrivalExpansion(trace, o).All();
  EXPECT_FALSE(a.size() == c.size() && a.front().time_s == c.front().time_s);
}

TEST(ArrivalExpansion, ShortDurationsAndPriorityShares) {
  RequestTrace trace = SmallTrace();
  ExpansionOptions o;
  o.duration_s = 600;  // shorter than one block
  o.peak_rate_per_s = 1;
  o.diurnal_trough = 1;  // flat
  o.low_priority_share = 0;
  auto all = ArrivalExpansion(trace, o).All();
  EXPECT_NEAR(static_cast<double>(all.size()), 600, 100);
  for (const Arrival& a : all) {
    ASSERT_LT(a.time_s, 600);
    ASSERT_EQ(a.priority, Priority::kHigh);
  }
}

}  // namespace
}  // namespace wattcut::polca
