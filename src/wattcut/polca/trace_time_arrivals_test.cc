#include "wattcut/polca/trace_time_arrivals.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/row_sweep.h"

namespace wattcut::polca {
namespace {

// The requests of hour h of the test trace: three days of a diurnal shape (busiest at hour 14 of
// day 2, quietest at night), between 150 and about 1,000 an hour: 40,000 requests in all.
int64_t HourRequests(int h) {
  const double day_shape = 0.5 * (1 + std::cos(2 * 3.14159265358979 * ((h % 24) - 14) / 24.0));
  const double day_factor = h / 24 == 1 ? 1.0 : 0.8;
  return 150 + static_cast<int64_t>(std::lround(850 * day_shape * day_factor));
}
constexpr int kHours = 72;

// Writes the trace in the 2024 form, "2024-05-10 00:00:00.009930+00:00", once per test binary.
const std::string& TracePath() {
  static const std::string path = [] {
    const std::string p = ::testing::TempDir() + "trace_time_arrivals_test_" + std::to_string(getpid()) + ".csv";
    std::ofstream out(p, std::ios::binary);
    out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    const double start = *ParseTimestamp("2024-05-10 00:00:00.009930");
    for (int h = 0; h < kHours; ++h) {
      const int64_t n = HourRequests(h);
      for (int64_t i = 0; i < n; ++i) {
        const double t = start + h * 3600.0 + 3600.0 * static_cast<double>(i) / static_cast<double>(n);
        out << FormatTimestamp(t) << "," << 100 + (i * 37) % 2000 << "," << 10 + (i * 13) % 300 << "\n";
      }
    }
    out << FormatTimestamp(start + kHours * 3600.0 + 1) << ",100,10\n";  // just after the last full hour
    return p;
  }();
  return path;
}

const TraceTimeline& Timeline() {
  static const TraceTimeline timeline = *TraceTimeline::Scan(TracePath());
  return timeline;
}

std::vector<Arrival> AllArrivals(TraceTimeOptions options) {
  auto source = TraceTimeArrivals::Open(Timeline(), options);
  EXPECT_TRUE(source.ok());
  std::vector<Arrival> all;
  ArrivalBlock block;
  while ((*source)->NextBlock(block)) all.insert(all.end(), block.begin(), block.end());
  EXPECT_TRUE((*source)->status().ok());
  return all;
}

TEST(TraceTimeArrivals, TheTimelineOfTheGeneratedTraceIsItsHours) {
  ASSERT_EQ(Timeline().hourly_requests.size(), static_cast<size_t>(kHours + 1));
  for (int h = 0; h < kHours; ++h) EXPECT_EQ(Timeline().hourly_requests[static_cast<size_t>(h)], HourRequests(h));
  EXPECT_EQ(Timeline().busiest_hour(), 24u + 14u);
  EXPECT_EQ(Timeline().busiest_hour_requests(), 1000);
}

// Each hour's arrivals are the trace's requests of that hour times the scale, within sampling
// error (each request's extra copy is a coin flip: variance n p (1 - p)), and the busiest hour is
// the configured peak rate.
void ExpectHoursFollowTheTrace(double peak_rate_per_s) {
  TraceTimeOptions options;
  options.duration_s = Timeline().duration_s();
  options.peak_rate_per_s = peak_rate_per_s;
  options.seed = 3;
  const double scale = TraceTimeArrivals::ScaleFor(Timeline(), peak_rate_per_s);
  EXPECT_DOUBLE_EQ(scale, peak_rate_per_s * 3600 / 1000);
  const std::vector<Arrival> arrivals = AllArrivals(options);
  std::vector<double> per_hour(kHours + 1, 0);
  int64_t low = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    ASSERT_GE(arrivals[i].time_s, 0);
    ASSERT_LT(arrivals[i].time_s, options.duration_s);
    if (i > 0) {
      ASSERT_GE(arrivals[i].time_s, arrivals[i - 1].time_s);
    }
    per_hour[static_cast<size_t>(arrivals[i].time_s / 3600)] += 1;
    low += arrivals[i].priority == Priority::kLow;
  }
  const double p = scale - std::floor(scale);
  for (int h = 0; h < kHours; ++h) {
    const double n = static_cast<double>(HourRequests(h));
    const double sigma = std::sqrt(n * p * (1 - p));
    // Copies placed up to a minute later move a few from one hour to the next: at most 1/60 of
    // the copies.
    const double moved = (scale > 1 ? (scale - 1) * n / 60 : 0);
    EXPECT_NEAR(per_hour[static_cast<size_t>(h)], scale * n, 5 * sigma + moved + 1) << "hour " << h;
  }
  const double busiest = per_hour[24 + 14];
  EXPECT_NEAR(busiest / 3600, peak_rate_per_s, (5 * std::sqrt(1000 * p * (1 - p)) + scale * 1000 / 60 + 1) / 3600);
  const double n = static_cast<double>(arrivals.size());
  EXPECT_NEAR(static_cast<double>(low) / n, 0.5, 5 * std::sqrt(0.25 / n));
}

TEST(TraceTimeArrivals, CopiesScaleEveryHourToTheRowsPeak) { ExpectHoursFollowTheTrace(2.5 * 1000 / 3600.0); }

TEST(TraceTimeArrivals, ThinningScalesEveryHourDownToTheRowsPeak) { ExpectHoursFollowTheTrace(0.4 * 1000 / 3600.0); }

TEST(TraceTimeArrivals, KeepsTheRequestsTokensAndIsReproducibleFromItsSeed) {
  TraceTimeOptions options;
  options.duration_s = 6 * 3600;
  options.peak_rate_per_s = 0.2;  // scale 0.72: thinned, every arrival at a request's own time
  const std::vector<Arrival> a = AllArrivals(options);
  const std::vector<Arrival> b = AllArrivals(options);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].time_s, b[i].time_s);
    EXPECT_EQ(a[i].priority, b[i].priority);
    // The trace's request at that time: its index within the hour gives its tokens.
    const int h = static_cast<int>(a[i].time_s / 3600);
    const double n = static_cast<double>(HourRequests(h));
    const auto k = static_cast<int64_t>(std::lround((a[i].time_s - h * 3600.0) * n / 3600.0));
    EXPECT_EQ(a[i].context_tokens, 100 + (k * 37) % 2000);
    EXPECT_EQ(a[i].generated_tokens, 10 + (k * 13) % 300);
  }
  options.seed = 2;
  EXPECT_NE(AllArrivals(options).size(), a.size());
}

PolcaConfig SixServerRow() {
  PolcaConfig config = *BuiltInConfig("a100");
  config.row.baseline_servers = 6;
  return config;
}

TEST(TraceTimeArrivals, SimulateRowFollowsTheTracesTimeline) {
  const PolcaConfig config = SixServerRow();
  RowRunOptions options;
  options.policy = PolicyKind::kNone;
  options.servers = 6;
  options.duration_s = Timeline().duration_s();
  auto run = SimulateRow(config, Timeline(), options);
  ASSERT_TRUE(run.ok()) << run.error().message;
  // The source the run reads, for the row's 6 serving servers.
  TraceTimeOptions arrivals;
  arrivals.duration_s = options.duration_s;
  arrivals.peak_rate_per_s = 6 * config.workload.peak_requests_per_server_s;
  arrivals.seed = options.seed;
  EXPECT_EQ(run->arrivals, static_cast<int64_t>(AllArrivals(arrivals).size()));
  EXPECT_EQ(run->duration_s, kHours * 3600 + 2);  // the span, 72 h and 1 s, rounded up
  // The row's power follows the trace's hours: its busiest hour draws more than its quietest.
  auto hour_mean = [&](int h) {
    double sum = 0;
    for (int s = h * 3600; s < (h + 1) * 3600; ++s) sum += run->power_samples[static_cast<size_t>(s)];
    return sum / 3600;
  };
  EXPECT_GT(hour_mean(24 + 14), hour_mean(24 + 2) + 0.05);

  options.duration_s = kHours * 3600 + 3;
  EXPECT_NE(SimulateRow(config, Timeline(), options).error().message.find("is longer than the trace"),
            std::string::npos);
}

TEST(TraceTimeArrivals, EveryRunOfASweepSeesTheSameRequests) {
  SweepOptions options;
  options.added_fractions = {0.0, 0.5};
  options.policies = {PolicyKind::kPolca, PolicyKind::kBrakeOnly};
  options.duration_s = 12 * 3600;
  options.jobs = 2;
  auto sweep = RunSweep(SixServerRow(), Timeline(), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->points.size(), 4u);
  for (const SweepPoint& point : sweep->points) {
    const size_t i = point.added_fraction == 0.0 ? 0 : 1;
    EXPECT_EQ(point.run.arrivals, sweep->references[i].arrivals);
  }
  // The larger row gets proportionally more (9 servers against 6).
  EXPECT_NEAR(static_cast<double>(sweep->references[1].arrivals) / static_cast<double>(sweep->references[0].arrivals),
              1.5, 0.05);
}

}  // namespace
}  // namespace wattcut::polca
