#include "wattcut/polca/arrival_expansion.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// The expansion as it was built before windows (arrival_expansion.h): each replay block whole,
// its draws taken in order (per copy its shift, then per request u and v), then sorted.
std::vector<Arrival> WholeBlocks(const RequestTrace& trace, const ExpansionOptions& o) {
  const double block_s = ArrivalExpansion::BlockSecondsFor(trace);
  const auto& requests = trace.requests();
  const double trace_rate = static_cast<double>(requests.size()) / block_s;
  std::vector<Arrival> all;
  for (int64_t b = 0; static_cast<double>(b) * block_s < o.duration_s; ++b) {
    const double start = static_cast<double>(b) * block_s;
    const double end = std::min(o.duration_s, start + block_s);
    SplitMix64 rng(o.seed, static_cast<uint64_t>(b));
    double max_envelope = 0;
    for (double t = start; t <= end; t += 60) max_envelope = std::max(max_envelope, DiurnalEnvelope(o, t));
    max_envelope = std::max(max_envelope, DiurnalEnvelope(o, end));
    const double copies_needed = o.peak_rate_per_s * max_envelope / trace_rate;
    const int copies = std::max(1, static_cast<int>(std::ceil(copies_needed - 1e-9)));
    const double keep_scale = o.peak_rate_per_s / (trace_rate * copies);
    std::vector<Arrival> block;
    for (int c = 0; c < copies; ++c) {
      const double shift = rng.Uniform() * block_s;
      for (const TraceRequest& r : requests) {
        double offset = r.arrival_s + shift;
        if (offset >= block_s) offset -= block_s;
        const double t = start + offset;
        const double u = rng.Uniform();
        const double v = rng.Uniform();
        if (t >= end) continue;
        if (u >= keep_scale * DiurnalEnvelope(o, t)) continue;
        block.push_back(
            {t, r.context_tokens, r.generated_tokens, v < o.low_priority_share ? Priority::kLow : Priority::kHigh});
      }
    }
    std::sort(block.begin(), block.end(), ArrivesBefore);
    all.insert(all.end(), block.begin(), block.end());
  }
  return all;
}

void ExpectSameArrivals(const std::vector<Arrival>& got, const std::vector<Arrival>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].time_s, want[i].time_s) << i;
    ASSERT_EQ(got[i].context_tokens, want[i].context_tokens) << i;
    ASSERT_EQ(got[i].generated_tokens, want[i].generated_tokens) << i;
    ASSERT_EQ(got[i].priority, want[i].priority) << i;
  }
}

TEST(ArrivalExpansion, WindowsHandOutTheWholeBlocksArrivalsInTheirOrder) {
  // Bunched and equal timestamps, a request at 0 and one just before the block's end (the shift
  // wraps at every point), several copies, a duration that ends inside a block and inside a window.
  std::vector<TraceRequest> requests;
  for (int i = 0; i < 2000; ++i) requests.push_back({i * 1.5, 50 + i % 13, 5 + i % 3});
  for (int i = 0; i < 300; ++i) requests.push_back({3000.0, 10 + i % 4, 1 + i % 2});
  for (int i = 0; i < 500; ++i) requests.push_back({3000.0 + i * 1.19, 20, 2});
  requests.push_back({3599.999, 7, 7});
  std::sort(requests.begin(), requests.end(),
            [](const TraceRequest& a, const TraceRequest& b) { return a.arrival_s < b.arrival_s; });
  RequestTrace trace = *RequestTrace::FromRequests(requests, "bunched");
  for (uint64_t seed : {1, 2, 3}) {
    ExpansionOptions o;
    o.duration_s = 3 * 3600 + 1234.5;
    o.peak_rate_per_s = 4.5;  // several copies
    o.diurnal_trough = 0.3;
    o.seed = seed;
    SCOPED_TRACE(seed);
    ExpectSameArrivals(ArrivalExpansion(trace, o).All(), WholeBlocks(trace, o));
  }
  // A trace longer than an hour: blocks of its span, windows within them.
  std::vector<TraceRequest> long_requests;
  for (int i = 0; i < 5000; ++i) long_requests.push_back({i * 1.7, 30 + i % 5, 3});
  RequestTrace long_trace = *RequestTrace::FromRequests(long_requests, "long");
  ExpansionOptions o;
  o.duration_s = 86400;
  o.peak_rate_per_s = 2;
  o.weekend_factor = 0.5;
  o.seed = 9;
  ExpectSameArrivals(ArrivalExpansion(long_trace, o).All(), WholeBlocks(long_trace, o));
}

TEST(ArrivalExpansion, HandsOutWindowsNotWholeBlocks) {
  RequestTrace trace = SmallTrace();
  ExpansionOptions o;
  o.duration_s = 2 * 3600;
  o.peak_rate_per_s = 50;
  ArrivalExpansion expansion(trace, o);
  ArrivalBlock block;
  int windows = 0;
  double last_end = 0;
  while (expansion.NextBlock(block)) {
    ++windows;
    if (block.empty()) continue;
    EXPECT_GE(block.front().time_s, last_end);
    EXPECT_LT(block.back().time_s - block.front().time_s, expansion.window_s());
    last_end = block.back().time_s;
  }
  // One request a second: a window is four seconds, so that each copy's run gives about four.
  EXPECT_DOUBLE_EQ(expansion.window_s(), 4);
  EXPECT_EQ(windows, 2 * 3600 / 4);
  EXPECT_TRUE(block.empty());
}

TEST(ArrivalExpansion, AWindowIsASecondOfADenseTraceAndLongerForASparseOne) {
  std::vector<TraceRequest> dense;
  for (int i = 0; i < 36000; ++i) dense.push_back({i * 0.1, 100, 10});
  std::vector<TraceRequest> sparse;
  for (int i = 0; i < 36; ++i) sparse.push_back({i * 100.0, 100, 10});
  ExpansionOptions o;
  o.duration_s = 3600;
  // Ten requests a second: the least window. One in 100 s: four of them, 400 s. The row's rate
  // plays no part (a run's requests a window do not depend on it).
  for (double rate : {1.0, 1000.0}) {
    o.peak_rate_per_s = rate;
    EXPECT_DOUBLE_EQ(ArrivalExpansion(*RequestTrace::FromRequests(dense, "dense"), o).window_s(),
                     ArrivalExpansion::kMinWindowS);
    EXPECT_DOUBLE_EQ(ArrivalExpansion(*RequestTrace::FromRequests(sparse, "sparse"), o).window_s(), 400);
  }
  // Never longer than a block.
  std::vector<TraceRequest> one = {{0, 100, 10}};
  EXPECT_DOUBLE_EQ(ArrivalExpansion(*RequestTrace::FromRequests(one, "one"), o).window_s(), 3600);
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
