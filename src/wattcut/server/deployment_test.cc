#include "wattcut/server/deployment.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>

#include "wattcut/plan/plan_lookup.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

TEST(Deployment, PollIntervalGrowsWithTheJobBetweenBounds) {
  EXPECT_EQ(DeploymentPollIntervalS(8), 0.5);
  EXPECT_EQ(DeploymentPollIntervalS(4000), 2.0);
  EXPECT_EQ(DeploymentPollIntervalS(16384), 8.192);
  EXPECT_EQ(DeploymentPollIntervalS(1000000), 30.0);
  EXPECT_EQ(DeploymentLeadS(8), 2.0);
}

TEST(Deployment, TheTargetOfADecision) {
  ScheduleDecision plan;
  plan.mode = ScheduleDecision::Mode::kPlan;
  plan.base_index = 9;
  plan.non_straggler_index = 4;
  plan.straggler_dp = {1};
  DeploymentTarget target = DeploymentTarget::From(plan, 1);
  EXPECT_TRUE(target.plan);
  EXPECT_EQ(target.PlanIndexFor(1), 9u);
  EXPECT_EQ(target.PlanIndexFor(0), 4u);
  ScheduleDecision all_max;
  all_max.mode = ScheduleDecision::Mode::kAllMax;
  EXPECT_FALSE(DeploymentTarget::From(all_max, 1).plan);
  EXPECT_EQ(DeploymentTarget::From(all_max, 1), DeploymentTarget{});
  EXPECT_NE(DeploymentTarget::From(plan, 2), target);  // the same indices of a new frontier
  plan.straggler_dp.clear();
  EXPECT_NE(DeploymentTarget::From(plan, 1), target);
}

TEST(Deployment, WithoutReportsAChangeAppliesAtTheNextStep) {
  StepProgress progress(4);
  EXPECT_EQ(progress.max_step(), 0);
  EXPECT_EQ(progress.steps_per_s(), 0);
  EXPECT_EQ(progress.ApplyStep(2), 1);
}

TEST(Deployment, AChangeAppliesFarEnoughAheadForTheFastestRank) {
  StepProgress progress(2);
  progress.Report(0, 10, 100.0);
  progress.Report(1, 8, 100.0);
  EXPECT_EQ(progress.steps_per_s(), 0);  // reports less than a second apart say nothing
  progress.Report(0, 30, 104.0);         // 5 steps a second
  progress.Report(1, 20, 104.0);         // 3 steps a second
  EXPECT_EQ(progress.max_step(), 30);
  EXPECT_DOUBLE_EQ(progress.steps_per_s(), 5);
  EXPECT_EQ(progress.ApplyStep(2.0), 30 + 1 + 20);   // twice 5 steps a second, over 2 s
  EXPECT_EQ(progress.ApplyStep(2.05), 30 + 1 + 21);  // rounded up
}

// A step past kMaxTrainingStep is refused where it comes in; a wild rate (a rank that jumped to
// the largest step within a second, or a stored one) cannot carry an apply step past int64_t.
TEST(Deployment, StepsAreBoundedAndTheApplyStepCannotOverflow) {
  EXPECT_TRUE(CheckTrainingStep(0, "step").ok());
  EXPECT_TRUE(CheckTrainingStep(kMaxTrainingStep, "step").ok());
  auto huge = CheckTrainingStep(INT64_MAX, "query parameter 'step'");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(huge.error().message,
            "query parameter 'step': 9223372036854775807 is outside [0, 1125899906842624] (2^50 steps)");
  EXPECT_FALSE(CheckTrainingStep(-1, "step").ok());

  StepProgress progress(1);
  progress.Report(0, 0, 0.0);
  progress.Report(0, kMaxTrainingStep, 1.0);
  EXPECT_EQ(progress.ApplyStep(3600), 2 * kMaxTrainingStep + 1);
  StepProgress stored(1);
  stored.set_fallback_steps_per_s(1e300);
  EXPECT_EQ(stored.ApplyStep(60), kMaxTrainingStep + 1);
  stored.set_fallback_steps_per_s(std::nan(""));
  EXPECT_EQ(stored.ApplyStep(60), kMaxTrainingStep + 1);
}

TEST(Deployment, ARestartedRankStartsItsRateOver) {
  StepProgress progress(1);
  progress.Report(0, 100, 0.0);
  progress.Report(0, 200, 10.0);
  EXPECT_DOUBLE_EQ(progress.steps_per_s(), 10);
  progress.Report(0, 3, 11.0);  // the rank restarted from step 0
  EXPECT_EQ(progress.max_step(), 3);
  EXPECT_EQ(progress.steps_per_s(), 0);
  progress.Report(5, 1, 1.0);  // beyond the job: ignored
}

TEST(Deployment, AfterARestartTheStoredRateStandsInUntilOneIsMeasured) {
  StepProgress progress(2);
  progress.set_fallback_steps_per_s(4);
  progress.Report(0, 50, 10.0);
  EXPECT_EQ(progress.steps_per_s(), 4);
  EXPECT_EQ(progress.ApplyStep(2.0), 50 + 1 + 16);
  progress.Report(0, 60, 12.0);
  EXPECT_EQ(progress.steps_per_s(), 5);
}

TEST(Deployment, TheLeastStepIsKnownOnceEveryRankReported) {
  StepProgress progress(3);
  EXPECT_EQ(progress.min_step(), std::nullopt);
  progress.Report(0, 12, 0);
  progress.Report(2, 9, 0);
  EXPECT_EQ(progress.min_step(), std::nullopt);  // rank 1 has not reported
  progress.Report(1, 10, 0);
  EXPECT_EQ(progress.min_step(), 9);
  progress.Report(2, 14, 1);
  EXPECT_EQ(progress.min_step(), 10);
  EXPECT_EQ(StepProgress(0).min_step(), std::nullopt);
}

// ThreePointFrontier: one GPU; average powers 9166.7, 9090.9 and 12000 W (slowest first).
TEST(Deployment, APowerTargetGivesTheFastestPointAtOrBelowIt) {
  Frontier frontier = testing::ThreePointFrontier();
  PowerTarget avg{PowerTarget::Kind::kAverage, 9100, ""};
  PowerCapPoint cap = PointForPowerTarget(frontier, avg);
  EXPECT_TRUE(cap.met);
  EXPECT_EQ(cap.index, 1u);
  EXPECT_NEAR(cap.power_per_gpu_w, 100 / 0.011, 1e-9);
  avg.per_gpu_w = 12000;
  EXPECT_EQ(PointForPowerTarget(frontier, avg).index, 2u);

  // Peak 1-s powers: 10000, 9500, 13000 W.
  frontier.SetPeakPower(0, 10000);
  frontier.SetPeakPower(1, 9500);
  frontier.SetPeakPower(2, 13000);
  PowerTarget peak{PowerTarget::Kind::kPeak1s, 10000, "row 7 at 95 %"};
  cap = PointForPowerTarget(frontier, peak);
  EXPECT_TRUE(cap.met);
  EXPECT_TRUE(cap.decided_by_target_kind);
  EXPECT_EQ(cap.index, 1u);
  EXPECT_EQ(cap.power_per_gpu_w, 9500);
  EXPECT_EQ(PeakPowerPerGpuW(frontier, 2), 13000);
}

TEST(Deployment, APowerTargetNoPlanMeetsGivesTheLowestPowerPointAndSaysSo) {
  Frontier frontier = testing::ThreePointFrontier();
  PowerCapPoint cap = PointForPowerTarget(frontier, PowerTarget{PowerTarget::Kind::kAverage, 9000, "", 0, 0});
  EXPECT_FALSE(cap.met);
  EXPECT_EQ(cap.index, 1u);
  EXPECT_NEAR(cap.power_per_gpu_w, 100 / 0.011, 1e-9);
  EXPECT_NE(cap.note.find("the lowest is"), std::string::npos) << cap.note;

  // A peak target on a frontier without peak powers: the average decides, and says so.
  cap = PointForPowerTarget(frontier, PowerTarget{PowerTarget::Kind::kPeak1s, 9100, "", 0, 0});
  EXPECT_FALSE(cap.decided_by_target_kind);
  EXPECT_TRUE(cap.met);
  EXPECT_EQ(cap.index, 1u);
  EXPECT_NE(cap.note.find("average power per GPU decided instead"), std::string::npos) << cap.note;

  frontier.SetPeakPower(0, 10000);
  frontier.SetPeakPower(1, 9500);
  frontier.SetPeakPower(2, 13000);
  cap = PointForPowerTarget(frontier, PowerTarget{PowerTarget::Kind::kPeak1s, 9000, "", 0, 0});
  EXPECT_FALSE(cap.met);
  EXPECT_EQ(cap.index, 1u);
  EXPECT_EQ(cap.power_per_gpu_w, 9500);
}

TEST(Deployment, ACapHoldsEveryPipelineToTheSlowerPoint) {
  ScheduleDecision plan;
  plan.mode = ScheduleDecision::Mode::kPlan;
  plan.base_index = 9;           // the straggler pipeline's
  plan.non_straggler_index = 4;  // the others'
  plan.straggler_dp = {1};
  ScheduleDecision capped = plan;
  CapDecision(capped, 6);
  EXPECT_EQ(capped.base_index, 6u);
  EXPECT_EQ(capped.non_straggler_index, 4u);
  capped = plan;
  CapDecision(capped, 2);
  EXPECT_EQ(capped.base_index, 2u);
  EXPECT_EQ(capped.non_straggler_index, 2u);
  capped = plan;
  CapDecision(capped, 20);  // above every point: no change
  EXPECT_EQ(capped.base_index, 9u);
  EXPECT_EQ(capped.non_straggler_index, 4u);
  ScheduleDecision all_max;
  all_max.mode = ScheduleDecision::Mode::kAllMax;
  CapDecision(all_max, 0);
  EXPECT_EQ(all_max.base_index, 0u);
  EXPECT_EQ(all_max.mode, ScheduleDecision::Mode::kAllMax);
}

}  // namespace
}  // namespace wattcut::server
