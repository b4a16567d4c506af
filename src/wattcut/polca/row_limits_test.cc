#include "wattcut/polca/row_limits.h"

#include <gtest/gtest.h>

#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/row_sweep.h"

namespace wattcut::polca {
namespace {

// One request a second for an hour.
RequestTrace Hourly() {
  std::vector<TraceRequest> r;
  for (int i = 0; i < 3600; ++i) r.push_back({static_cast<double>(i), 100, 10});
  return *RequestTrace::FromRequests(r, "hourly");
}

RowRunOptions RunOf(int servers, double duration_s) {
  RowRunOptions o;
  o.servers = servers;
  o.duration_s = duration_s;
  return o;
}

TEST(RowLimits, RowSizeAndDuration) {
  EXPECT_TRUE(CheckRowSize(1, "--servers").ok());
  EXPECT_TRUE(CheckRowSize(kMaxServersPerRow, "--servers").ok());
  EXPECT_EQ(
      CheckRowSize(0, "--servers").error().message,
      "--servers must be between 1 and 10000 servers (10,000 servers draw about 65 MW, a whole datacenter), got 0");
  EXPECT_FALSE(CheckRowSize(kMaxServersPerRow + 1, "--servers").ok());
  EXPECT_TRUE(CheckDuration(1).ok());
  EXPECT_TRUE(CheckDuration(90 * 86400.0).ok());
  EXPECT_FALSE(CheckDuration(0.5).ok());
  EXPECT_FALSE(CheckDuration(90 * 86400.0 + 1).ok());
  EXPECT_FALSE(CheckDuration(std::numeric_limits<double>::quiet_NaN()).ok());
}

TEST(RowLimits, TrainingTimelineStepsPerRunAreBounded) {
  PolcaConfig config = *BuiltInConfig("a100");
  config.workload.peak_requests_per_server_s = 0.001;
  config.row.training_share = 0.5;
  // 50 training servers for 7 days at 0.25 s: 121 million steps.
  EXPECT_TRUE(CheckRowRun(config, Hourly(), RunOf(100, 7 * 86400.0)).ok());
  config.training.timeline_step_s = 0.01;  // 3 billion
  EXPECT_EQ(CheckRowRun(config, Hourly(), RunOf(100, 7 * 86400.0)).error().message,
            "a run of 50 training servers for 604800 s at a timeline step of 0.01 s simulates 3.024e+09 steps, more "
            "than the 2000000000 one run may (minutes of work); shorten --duration or lengthen "
            "training.timeline_step_s");
  config.row.training_share = 0;  // no training servers: no bound to meet
  EXPECT_TRUE(CheckRowRun(config, Hourly(), RunOf(100, 7 * 86400.0)).ok());
}

TEST(RowLimits, ReplayedRequestsFollowTheExpansion) {
  PolcaConfig config = *BuiltInConfig("a100");  // 0.7 requests/s per server at the peak
  RequestTrace trace = Hourly();
  // 40 servers: 28 requests/s at the peak, so 28 copies of the 3,600-request hour.
  EXPECT_DOUBLE_EQ(ReplayedRequestsPerBlock(config, trace, 40), 28 * 3600.0);
  EXPECT_DOUBLE_EQ(ReplayedRequestsPerRun(config, trace, 40, 86400), 24 * 28 * 3600.0);
  EXPECT_DOUBLE_EQ(ReplayedRequestsPerRun(config, trace, 40, 1), 28 * 3600.0);  // one whole block
  config.workload.weekend_factor = 2;
  EXPECT_DOUBLE_EQ(ReplayedRequestsPerBlock(config, trace, 40), 56 * 3600.0);
}

TEST(RowLimits, CheckRowRunRefusesWhatWouldExhaustMemory) {
  PolcaConfig config = *BuiltInConfig("a100");
  RequestTrace trace = Hourly();
  EXPECT_TRUE(CheckRowRun(config, trace, RunOf(52, 7 * 86400.0)).ok());
  EXPECT_FALSE(CheckRowRun(config, trace, RunOf(0, 3600)).ok());
  EXPECT_FALSE(CheckRowRun(config, trace, RunOf(40, 1e12)).ok());
  // 2,000 servers at 0.7/s for 90 days replay ~1.1e10 requests.
  const std::string many = CheckRowRun(config, trace, RunOf(2000, 90 * 86400.0)).error().message;
  EXPECT_NE(many.find("more than the 200000000 one run may simulate"), std::string::npos) << many;
  // 10 ms readings for 90 days: 7.8e8 readings.
  config.control.telemetry_period_s = 0.01;
  const std::string readings = CheckRowRun(config, trace, RunOf(10, 90 * 86400.0)).error().message;
  EXPECT_NE(readings.find("row power readings, more than the 50000000"), std::string::npos) << readings;
  config.control.telemetry_period_s = 1;
  // A month-long trace is one block: 2,000 servers x 1000/s x 31 days at once.
  std::vector<TraceRequest> r = {{0, 1, 1}, {kMaxTraceSpanS, 1, 1}};
  RequestTrace month = *RequestTrace::FromRequests(r, "month");
  config.workload.peak_requests_per_server_s = kMaxRequestsPerServerS;
  const std::string block = CheckRowRun(config, month, RunOf(2000, 3600)).error().message;
  EXPECT_NE(block.find("one replay block"), std::string::npos) << block;
}

TEST(RowLimits, SimulateRowAndRunSweepCheckBeforeAllocating) {
  PolcaConfig config = *BuiltInConfig("a100");
  RequestTrace trace = Hourly();
  // Each of these allocated without bound before (bad_alloc or length_error).
  EXPECT_FALSE(SimulateRow(config, trace, RunOf(2'000'000'000, 3600)).ok());
  EXPECT_FALSE(SimulateRow(config, trace, RunOf(40, 1e18)).ok());
  config.control.telemetry_period_s = 1e-9;  // Validate() catches it first
  EXPECT_FALSE(SimulateRow(config, trace, RunOf(40, 3600)).ok());
  config.control.telemetry_period_s = 1;

  SweepOptions sweep;
  sweep.policies = {PolicyKind::kPolca};
  sweep.duration_s = 3600;
  sweep.added_fractions = std::vector<double>(2000, 0.0);
  for (size_t i = 0; i < sweep.added_fractions.size(); ++i) sweep.added_fractions[i] = 0.001 * static_cast<double>(i);
  EXPECT_NE(RunSweep(config, trace, sweep).error().message.find("more than 1000"), std::string::npos);
  sweep.added_fractions = {0};
  sweep.jobs = 1'000'000;  // one thread each, before: std::system_error
  EXPECT_NE(RunSweep(config, trace, sweep).error().message.find("--jobs must be between 1 and 256"), std::string::npos);
  config.row.baseline_servers = 8000;
  sweep.jobs = 1;
  sweep.added_fractions = {0.5};  // 12,000 servers
  EXPECT_NE(RunSweep(config, trace, sweep).error().message.find("between 1 and 10000"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::polca
