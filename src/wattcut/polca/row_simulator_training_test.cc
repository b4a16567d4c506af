// The row simulator with training servers: by hand on a row whose power is known exactly, and
// unchanged results for a row that does not train.
#include <gtest/gtest.h>

#include "wattcut/polca/row_simulator.h"
#include "wattcut/polca/synthetic_trace_testing.h"
#include "wattcut/polca/training_job.h"

namespace wattcut::polca {
namespace {

using testing::SyntheticHourAtFiveRequestsASecond;

// Constant-power timelines, so that the row's power is known at every second: AllMax 5,000 W
// for 10 s an iteration; the 1275 MHz lock 4,600 W for 12 s; the plan of a 350 W target 4,400 W
// for 10.5 s (of 300 W: 4,000 W for 12.5 s); the brake's 900 MHz 3,000 W for 20 s.
TrainingJob ConstantPowerJob() {
  TrainingJob job;
  job.stages = 8;
  job.all_max = {"AllMax", 1410, {10}, {5000}, 400};
  job.locks = {{"900 MHz", 900, {20}, {3000}, 200},
               {"1275 MHz", 1275, {12}, {4600}, 360},
               {"1410 MHz", 1410, {10}, {5000}, 400}};
  job.plans = {
      {"plan 9", 0, {10}, {4900}, 390}, {"plan 5", 0, {10.5}, {4400}, 340}, {"plan 1", 0, {12.5}, {4000}, 290}};
  job.fastest_plan = 0;
  return job;
}

// Four servers, two of them training; requests so rare that the two inference servers idle at
// 1700 + 8 x 80 x 1.15 = 2436 W. AllMax: 2 x 2436 + 2 x 5000 = 14872 W, 83.6 % of 17.8 kW (above
// T1 = 80 %, below T2); the lock's 14072 W (79.1 %) and the plan's 13672 W (76.8 %) stay above
// T1's release (75 %), so T1 holds from the first reading on.
PolcaConfig TrainingRow() {
  PolcaConfig c = *BuiltInConfig("a100");
  c.row.baseline_servers = 4;
  c.row.budget_w = 17800;
  c.row.training_share = 0.5;
  c.workload.peak_requests_per_server_s = 1e-6;
  c.training.plan_without_target = "all-max";
  return c;
}

RowRunOptions Options(PolicyKind policy, TrainingControl control, const TrainingJob* job) {
  RowRunOptions o;
  o.policy = policy;
  o.servers = 4;
  o.duration_s = 600;
  o.seed = 3;
  o.training_job = job;
  o.training_control = control;
  return o;
}

constexpr double kIdle = 2436;
constexpr double kBudget = 17800;

TEST(RowSimulatorTraining, ALockActsAtOnceAfterTheActuationLatency) {
  const TrainingJob job = ConstantPowerJob();
  auto run = SimulateRow(TrainingRow(), SyntheticHourAtFiveRequestsASecond(),
                         Options(PolicyKind::kPolca, TrainingControl::kLocks, &job));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->training.servers, 2);
  EXPECT_EQ(run->high.servers + run->low.servers, 2);
  EXPECT_EQ(run->brake_events, 0);
  // The reading of [0, 1] reaches the policy at 3 (telemetry delay 2 s): T1, the low-priority lock
  // (and with it the training servers') in effect from 3 + 40 = 43 s.
  ASSERT_EQ(run->power_samples.size(), 600u);
  for (size_t k = 0; k < 43; ++k) EXPECT_NEAR(run->power_samples[k], (2 * kIdle + 2 * 5000) / kBudget, 1e-6) << k;
  for (size_t k = 43; k < 600; ++k) EXPECT_NEAR(run->power_samples[k], (2 * kIdle + 2 * 4600) / kBudget, 1e-6) << k;
  // Each server: 4.3 iterations at AllMax, then (600 - 43) / 12 at the lock, whatever its phase.
  EXPECT_NEAR(run->training.iterations, 2 * (43.0 / 10 + 557.0 / 12), 1e-9);
  EXPECT_NEAR(run->training.limited_server_s, 2 * 557.0, 1e-6);
  EXPECT_EQ(run->training.plan_changes, 0);

  auto reference = SimulateRow(TrainingRow(), SyntheticHourAtFiveRequestsASecond(),
                               Options(PolicyKind::kNone, TrainingControl::kLocks, &job));
  ASSERT_TRUE(reference.ok());
  EXPECT_NEAR(reference->training.iterations, 2 * 60.0, 1e-9);
  EXPECT_NEAR(CompareRuns(*run, *reference).training_throughput, (43.0 / 10 + 557.0 / 12) / 60 - 1, 1e-12);
}

TEST(RowSimulatorTraining, APowerTargetChangesThePlanAtTheApplyStep) {
  const TrainingJob job = ConstantPowerJob();
  auto run = SimulateRow(TrainingRow(), SyntheticHourAtFiveRequestsASecond(),
                         Options(PolicyKind::kPolca, TrainingControl::kPowerTarget, &job));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->brake_events, 0);
  // The 350 W target is set at 3 s, when the policy reaches T1. Its apply step: the boundary
  // ending the iteration in progress, then ceil(2 x 2 s / 10 s) = 1 more, so each server takes
  // up plan 5 at its second boundary after 3 s, between 13 s and 23 s, and keeps it.
  for (size_t k = 0; k < 13; ++k) EXPECT_NEAR(run->power_samples[k], (2 * kIdle + 2 * 5000) / kBudget, 1e-6) << k;
  for (size_t k = 23; k < 600; ++k) EXPECT_NEAR(run->power_samples[k], (2 * kIdle + 2 * 4400) / kBudget, 1e-6) << k;
  EXPECT_EQ(run->training.plan_changes, 2);
  EXPECT_EQ(run->training.limited_server_s, 0);
  EXPECT_NEAR(run->training.targeted_server_s, 2 * 597.0, 1e-6);
  EXPECT_EQ(run->training.target_not_met_s, 0);
  // AllMax up to a boundary b in [13, 23), then plan 5: between the two ends of that range.
  const double low = 2 * (13.0 / 10 + 577.0 / 10.5), high = 2 * (23.0 / 10 + 587.0 / 10.5);
  EXPECT_GT(run->training.iterations, low);
  EXPECT_LT(run->training.iterations, high);

  // A wider apply margin waits for more boundaries: ceil(2 x 12 s / 10 s) = 3 more, the fourth
  // boundary after 3 s, between 33 s and 43 s.
  PolcaConfig slow = TrainingRow();
  slow.training.apply_margin_s = 12;
  auto later = SimulateRow(slow, SyntheticHourAtFiveRequestsASecond(),
                           Options(PolicyKind::kPolca, TrainingControl::kPowerTarget, &job));
  ASSERT_TRUE(later.ok());
  for (size_t k = 0; k < 33; ++k) EXPECT_NEAR(later->power_samples[k], (2 * kIdle + 2 * 5000) / kBudget, 1e-6) << k;
  for (size_t k = 43; k < 600; ++k) EXPECT_NEAR(later->power_samples[k], (2 * kIdle + 2 * 4400) / kBudget, 1e-6) << k;
}

TEST(RowSimulatorTraining, ATargetNoPlanMeetsGetsTheLowPriorityLockAsACeiling) {
  TrainingJob job = ConstantPowerJob();
  for (TrainingTimeline& plan : job.plans) plan.peak_power_per_gpu_w += 100;  // none at or below 350 W
  job.plans[2].server_w = {4700};  // the lowest-peak plan: 14272 W in the row, above T1's release
  auto run = SimulateRow(TrainingRow(), SyntheticHourAtFiveRequestsASecond(),
                         Options(PolicyKind::kPolca, TrainingControl::kPowerTarget, &job));
  ASSERT_TRUE(run.ok()) << run.error().message;
  // The lowest-peak plan (plan 1, 390 W) from its apply step; the 1275 MHz lock (360 W) as a
  // ceiling from 43 s, when the low-priority lock is in effect.
  EXPECT_NEAR(run->training.target_not_met_s, 597.0, 1e-6);
  EXPECT_NEAR(run->training.limited_server_s, 2 * 557.0, 1e-6);
  for (size_t k = 43; k < 600; ++k) EXPECT_NEAR(run->power_samples[k], (2 * kIdle + 2 * 4600) / kBudget, 1e-6) << k;
}

TEST(RowSimulatorTraining, TheBrakeHitsTrainingServersUnderEitherControl) {
  const TrainingJob job = ConstantPowerJob();
  PolcaConfig config = TrainingRow();
  config.row.budget_w = 14000;  // AllMax is 106 % of it
  for (TrainingControl control : {TrainingControl::kLocks, TrainingControl::kPowerTarget}) {
    auto run = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), Options(PolicyKind::kPolca, control, &job));
    ASSERT_TRUE(run.ok()) << run.error().message;
    EXPECT_GE(run->brake_events, 1) << TrainingControlName(control);
    // The reading of [0, 1] at 3 s; the brake 5 s later, at once on the training servers too.
    // Idle inference servers draw idle power at any clock.
    EXPECT_NEAR(run->power_samples[7], (2 * kIdle + 2 * 5000) / 14000, 1e-6) << TrainingControlName(control);
    EXPECT_NEAR(run->power_samples[8], (2 * kIdle + 2 * 3000) / 14000, 1e-6) << TrainingControlName(control);
    EXPECT_GT(run->training.limited_server_s, 0) << TrainingControlName(control);
    EXPECT_EQ(RunLabel(*run), "polca+" + TrainingControlName(control));
  }
}

TEST(RowSimulatorTraining, ARowWithoutTrainingServersIsUnchanged) {
  PolcaConfig config = *BuiltInConfig("a100");
  const TrainingJob job = ConstantPowerJob();
  RowRunOptions plain;
  plain.policy = PolicyKind::kPolca;
  plain.servers = 12;
  plain.duration_s = 3 * 3600;
  plain.seed = 5;
  RowRunOptions with_job = plain;
  with_job.training_job = &job;
  with_job.training_control = TrainingControl::kPowerTarget;
  auto a = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), plain);
  auto b = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), with_job);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->power_samples, b->power_samples);
  EXPECT_EQ(a->arrivals, b->arrivals);
  EXPECT_EQ(a->high.latency_p99_s, b->high.latency_p99_s);
  EXPECT_EQ(a->low.latency_p50_s, b->low.latency_p50_s);
  EXPECT_EQ(a->energy_kwh, b->energy_kwh);
  EXPECT_EQ(b->training.servers, 0);
  EXPECT_EQ(RunLabel(*b), "polca");
  EXPECT_EQ(CompareRuns(*b, *a).training_throughput, 0);
}

TEST(RowSimulatorTraining, ARowThatTrainsNeedsItsJobAndAnInferenceServer) {
  PolcaConfig config = TrainingRow();
  auto no_job = SimulateRow(config, SyntheticHourAtFiveRequestsASecond(),
                            Options(PolicyKind::kPolca, TrainingControl::kLocks, nullptr));
  EXPECT_EQ(no_job.error().message, "the row trains (row.training_share > 0) but has no training job");
  const TrainingJob job = ConstantPowerJob();
  config.row.training_share = 0.9;
  config.row.baseline_servers = 1;
  RowRunOptions one = Options(PolicyKind::kPolca, TrainingControl::kLocks, &job);
  one.servers = 1;
  EXPECT_NE(
      SimulateRow(config, SyntheticHourAtFiveRequestsASecond(), one).error().message.find("has no inference server"),
      std::string::npos);
}

}  // namespace
}  // namespace wattcut::polca
