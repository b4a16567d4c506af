#include "wattcut/server/energy_saving.h"

#include <gtest/gtest.h>

#include "wattcut/plan/all_max.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using testing::ThreePointFrontier;

DeploymentTarget Plan(size_t base, size_t others, std::set<int> stragglers = {}) {
  DeploymentTarget target;
  target.plan = true;
  target.base_index = base;
  target.non_straggler_index = others;
  target.straggler_dp = std::move(stragglers);
  return target;
}

TEST(EnergySaving, AStepSavesAllMaxMinusEachPipelinesPointTimesTensorParallelism) {
  const Frontier frontier = ThreePointFrontier();
  const AllMaxPoint all_max{0.010, 130};
  // 4 pipelines at point 2 (120 J): 4 x 10 J, x 2 tensor-parallel GPUs a stage.
  EXPECT_DOUBLE_EQ(StepSavingJ(frontier, all_max, Plan(2, 2), 4, 2), 80);
  // Pipeline 1 straggles at point 2; the three others run point 1 (100 J).
  EXPECT_DOUBLE_EQ(StepSavingJ(frontier, all_max, Plan(2, 1, {1}), 4, 1), 10 + 3 * 30);
  // AllMax saves nothing; an index off the frontier counts nothing.
  DeploymentTarget all_max_target;
  EXPECT_EQ(StepSavingJ(frontier, all_max, all_max_target, 4, 1), 0);
  EXPECT_EQ(StepSavingJ(frontier, all_max, Plan(7, 7), 4, 1), 0);
}

// The same pipelines: what a step uses, the pipelines' points' energies times tensor parallelism.
TEST(EnergySaving, AStepUsesEachPipelinesPointTimesTensorParallelism) {
  const Frontier frontier = ThreePointFrontier();
  const AllMaxPoint all_max{0.010, 130};
  // 4 pipelines at point 2 (120 J), x 2 tensor-parallel GPUs a stage: 4 x 120 x 2.
  EXPECT_EQ(StepEnergyJ(frontier, all_max, Plan(2, 2), 4, 2), 960);
  // Pipeline 1 straggles at point 2 (120 J); the three others run point 1 (100 J).
  EXPECT_EQ(StepEnergyJ(frontier, all_max, Plan(2, 1, {1}), 4, 1), 120 + 3 * 100);
  // AllMax uses the AllMax energy: 4 x 130 x 2; without an AllMax point the planner cannot say.
  DeploymentTarget all_max_target;
  EXPECT_EQ(StepEnergyJ(frontier, all_max, all_max_target, 4, 2), 1040);
  EXPECT_EQ(StepEnergyJ(frontier, std::nullopt, all_max_target, 4, 2), std::nullopt);
  // A plan needs no AllMax point; an index off the frontier cannot be said.
  EXPECT_EQ(StepEnergyJ(frontier, std::nullopt, Plan(0, 0), 1, 1), 110);
  EXPECT_EQ(StepEnergyJ(frontier, all_max, Plan(7, 7), 4, 1), std::nullopt);
  // The saving is the difference: AllMax's 1040 J less the plan's 960 J.
  EXPECT_EQ(StepSavingJ(frontier, all_max, Plan(2, 2), 4, 2), 1040 - 960);
}

StepRate Rate(double saving_j, bool is_plan, std::optional<double> energy_j = std::nullopt) {
  return StepRate{saving_j, energy_j, is_plan};
}

TEST(EnergySaving, TheTallyCountsStepsAfterTheFirstReportAtTheRateInForce) {
  EnergySavingTally tally;
  EXPECT_FALSE(tally.started());
  tally.Advance(100, Rate(5, true), 0);  // the start: steps before it are not counted
  EXPECT_TRUE(tally.started());
  EXPECT_EQ(tally.counted_steps(), 0);
  tally.Advance(110, Rate(5, true), 0);
  EXPECT_DOUBLE_EQ(tally.saved_j(), 50);
  EXPECT_EQ(tally.plan_steps(), 10);
  // A change to 2 J a step applying from step 115: steps 110..114 still save 5 J, 115..119 2 J.
  tally.Advance(120, Rate(2, true), 115);
  EXPECT_DOUBLE_EQ(tally.saved_j(), 50 + 25 + 10);
  // Back to AllMax from step 121: step 120 at 2 J, 121..129 nothing, and not plan steps.
  tally.Advance(130, Rate(0, false), 121);
  EXPECT_DOUBLE_EQ(tally.saved_j(), 87);
  EXPECT_EQ(tally.counted_steps(), 30);
  EXPECT_EQ(tally.plan_steps(), 21);
  // A rank restarted from a checkpoint: nothing counted, counting restarts there.
  tally.Advance(90, Rate(4, true), 0);
  EXPECT_DOUBLE_EQ(tally.saved_j(), 87);
  tally.Advance(91, Rate(4, true), 0);
  EXPECT_DOUBLE_EQ(tally.saved_j(), 91);
  // No step here said what it used.
  EXPECT_EQ(tally.estimated_steps(), 0);
  EXPECT_EQ(tally.estimated_j(), 0);
}

// The estimate of the energy used counts the steps whose energy the planner could say, each at
// the energy of the target it ran, as the saving does.
TEST(EnergySaving, TheTallyEstimatesTheEnergyOfTheStepsItCanSay) {
  EnergySavingTally tally;
  tally.Advance(100, Rate(5, true, 50), 0);  // the start
  tally.Advance(110, Rate(5, true, 50), 0);  // steps 100..109 at 50 J
  EXPECT_EQ(tally.estimated_j(), 500);
  EXPECT_EQ(tally.estimated_steps(), 10);
  // The frontier is recomputed from step 115 on (AllMax, no point to say its energy): steps
  // 110..114 still at 50 J, 115..119 counted but not estimated.
  tally.Advance(120, Rate(0, false), 115);
  EXPECT_EQ(tally.estimated_j(), 500 + 5 * 50);
  EXPECT_EQ(tally.estimated_steps(), 15);
  EXPECT_EQ(tally.counted_steps(), 20);
  // AllMax at a known 65 J from step 121: step 120 as before (unknown), 121..129 at 65 J.
  tally.Advance(130, Rate(0, false, 65), 121);
  EXPECT_EQ(tally.estimated_j(), 750 + 9 * 65);
  EXPECT_EQ(tally.estimated_steps(), 24);
  EXPECT_EQ(tally.counted_steps(), 30);
}

TEST(EnergySaving, TheAllMaxReferenceIsTheEmulatedAllMaxOfTheFrontiersSchedule) {
  auto profile = ParseProfileCsv(testing::SmallProfileCsv(2), "small", 2);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  PlannerOptions options;
  options.num_microbatches = 4;
  options.p2p_power_w = 30;
  auto frontier = ComputeFrontier(*profile, options);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  auto reference = AllMaxReference(*profile, *frontier, 1);
  ASSERT_TRUE(reference.has_value());
  const double time_s = AllMaxIterationTime(*profile, frontier->setup().schedule);
  EXPECT_DOUBLE_EQ(reference->time_s, time_s);
  EXPECT_DOUBLE_EQ(reference->energy_j, AllMaxEnergy(*profile, frontier->setup().schedule, time_s, 30));
  // Every computation at its highest clock: no point of the frontier is faster by more than
  // a unit time's rounding, and the fastest point spends no more than AllMax.
  EXPECT_GE(reference->time_s + options.unit_time_s, frontier->points().back().time_s);
  EXPECT_LE(frontier->points().back().energy_j, reference->energy_j * 1.0001);
  // A profile of another pipeline depth does not fit.
  auto three = ParseProfileCsv(testing::SmallProfileCsv(3), "three", 3);
  ASSERT_TRUE(three.ok());
  EXPECT_FALSE(AllMaxReference(*three, *frontier, 1).has_value());
}

}  // namespace
}  // namespace wattcut::server
