#include "wattcut/polca/row_sweep.h"

#include <gtest/gtest.h>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/polca/synthetic_trace_testing.h"
#include "wattcut/polca/training_job.h"

namespace wattcut::polca {
namespace {

using testing::SyntheticHourAtTwoRequestsASecond;

// Eight servers of the A100 config whose load stays at its peak all day (no diurnal trough).
PolcaConfig EightServerRowAtFullLoad() {
  PolcaConfig config = *BuiltInConfig("a100");
  config.row.baseline_servers = 8;
  config.workload.diurnal_trough = 1.0;
  return config;
}

// A row above its budget without a brake (a brake set above the budget) holds nothing: before,
// such a point "held" with zero brake events and every SLO met.
TEST(RowSweep, ARowAboveItsBudgetWithoutABrakeHoldsNothing) {
  PolcaConfig config = EightServerRowAtFullLoad();
  config.policy.brake = 10;  // never reached: nothing brakes
  config.policy.brake_release = 9;
  SweepOptions options;
  options.added_fractions = {1.0};
  options.policies = {PolicyKind::kBrakeOnly};
  options.duration_s = 2 * 3600;
  options.jobs = 1;
  auto sweep = RunSweep(config, SyntheticHourAtTwoRequestsASecond(), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  const SweepPoint& p = sweep->points.front();
  ASSERT_GT(p.run.seconds_above_budget, 0) << "the doubled row must draw above its budget";
  EXPECT_EQ(p.run.brake_events, 0);
  EXPECT_TRUE(p.meets_slos);
  EXPECT_FALSE(p.holds);
}

TEST(RowSweep, ComparesEveryPointWithItsUnconstrainedRun) {
  SweepOptions options;
  options.added_fractions = {0.5, 0.0, 0.25, 0.25};  // unsorted, with a duplicate
  options.policies = {PolicyKind::kPolca, PolicyKind::kBrakeOnly};
  options.duration_s = 2 * 3600;
  options.jobs = 1;
  auto sweep = RunSweep(EightServerRowAtFullLoad(), SyntheticHourAtTwoRequestsASecond(), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  EXPECT_EQ(sweep->added_fractions, (std::vector<double>{0.0, 0.25, 0.5}));
  ASSERT_EQ(sweep->references.size(), 3u);
  ASSERT_EQ(sweep->points.size(), 6u);
  EXPECT_EQ(sweep->points[0].servers, 8);
  EXPECT_EQ(sweep->points[2].servers, 10);
  EXPECT_EQ(sweep->points[5].servers, 12);
  EXPECT_EQ(sweep->points[1].run.policy, PolicyKind::kBrakeOnly);
  for (const SweepPoint& p : sweep->points) {
    EXPECT_EQ(p.holds, p.meets_slos && p.run.brake_events == 0 && p.run.seconds_above_budget == 0);
    EXPECT_EQ(p.run.power_samples.size(), 0u);  // not kept in sweeps
  }
  // With no added servers there is nothing to do: identical to the reference.
  EXPECT_DOUBLE_EQ(sweep->points[0].impact.high.p50_latency, 0.0);
  EXPECT_TRUE(sweep->points[0].holds);
  EXPECT_DOUBLE_EQ(sweep->simulated_s, 9 * 2 * 3600.0);
  // max_added_held is the last point of the leading run of holding points.
  for (size_t p = 0; p < 2; ++p) {
    double expected = -1;
    for (size_t i = 0; i < 3 && sweep->points[i * 2 + p].holds; ++i) expected = sweep->added_fractions[i];
    EXPECT_DOUBLE_EQ(sweep->max_added_held[p], expected);
  }

  // Parallel runs give the same results.
  options.jobs = 3;
  auto parallel = RunSweep(EightServerRowAtFullLoad(), SyntheticHourAtTwoRequestsASecond(), options);
  ASSERT_TRUE(parallel.ok());
  for (size_t i = 0; i < sweep->points.size(); ++i) {
    EXPECT_EQ(parallel->points[i].run.brake_events, sweep->points[i].run.brake_events);
    EXPECT_EQ(parallel->points[i].run.high.latency_p99_s, sweep->points[i].run.high.latency_p99_s);
  }
}

TEST(RowSweep, RejectsEmptyOrNegativeInputs) {
  SweepOptions options;
  options.policies = {PolicyKind::kPolca};
  EXPECT_NE(RunSweep(EightServerRowAtFullLoad(), SyntheticHourAtTwoRequestsASecond(), options)
                .error()
                .message.find("at least one added"),
            std::string::npos);
  options.added_fractions = {-0.1};
  EXPECT_NE(RunSweep(EightServerRowAtFullLoad(), SyntheticHourAtTwoRequestsASecond(), options)
                .error()
                .message.find("between 0 %"),
            std::string::npos);
  options.added_fractions = {0.1};
  options.policies = {};
  EXPECT_NE(RunSweep(EightServerRowAtFullLoad(), SyntheticHourAtTwoRequestsASecond(), options)
                .error()
                .message.find("at least one policy"),
            std::string::npos);
  EXPECT_EQ(ServersFor(40, 0.3), 52);
  EXPECT_EQ(ServersFor(40, 0.25), 50);
}

// A mixed row (a quarter of its servers training GPT-3 on the A100 profile) swept with both
// training controls: power-capped training holds at least as many added servers as locks, and
// costs the training job less.
TEST(RowSweep, PowerTargetHoldsAtLeastAsManyServersAsLocksOnAMixedRow) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  PolcaConfig config = EightServerRowAtFullLoad();
  config.row.training_share = 0.25;
  config.training.profile = profile;
  Result<TrainingJob> job = BuildTrainingJob(config);
  ASSERT_TRUE(job.ok()) << job.error().message;
  SweepOptions options;
  options.added_fractions = {0.0, 0.25, 0.5};
  options.policies = {PolicyKind::kPolca};
  options.training_controls = {TrainingControl::kLocks, TrainingControl::kPowerTarget};
  options.training_job = &*job;
  options.duration_s = 2 * 3600;
  options.jobs = 2;
  auto sweep = RunSweep(config, SyntheticHourAtTwoRequestsASecond(), options);
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_EQ(sweep->points.size(), 6u);
  ASSERT_EQ(sweep->max_added_held.size(), 2u);
  EXPECT_EQ(RunLabel(sweep->points[0].run), "polca+locks");
  EXPECT_EQ(RunLabel(sweep->points[1].run), "polca+power-target");
  EXPECT_EQ(sweep->points[4].run.training.servers, 3);  // 12 servers, a quarter training
  EXPECT_EQ(sweep->references[2].training.servers, 3);
  EXPECT_GE(sweep->max_added_held[1], sweep->max_added_held[0]);
  // Where the row is pressed (T1 and above), the power target slows training less than locks.
  const SweepPoint& locks = sweep->points[4];
  const SweepPoint& target = sweep->points[5];
  ASSERT_GT(locks.run.level_s[1] + locks.run.level_s[2] + locks.run.level_s[3], 0);
  EXPECT_LT(locks.impact.training_throughput, 0);
  EXPECT_GT(target.impact.training_throughput, locks.impact.training_throughput);
}

}  // namespace
}  // namespace wattcut::polca
