#include "wattcut/plan/plan_lookup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "wattcut/plan/frontier.h"

namespace wattcut {
namespace {

// Two stages; five points from 10 s (100 J) to 6 s (140 J); the least energy, 80 J, at 8 s.
// Average power per GPU: 5, 4.44, 5, 8.57, 11.67 W.
Frontier Sample() {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}},
                    {{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  setup.unit_time_s = 1;
  std::vector<std::pair<int64_t, int>> options = {{1, 1410}, {2, 1200}, {3, 900}};
  setup.options = {{options, options}, {options, options}};
  Frontier frontier(setup, {3, 3, 3, 3});
  frontier.AddPoint({10, 10, 100, 100}, {});
  frontier.AddPoint({9, 9, 80, 80}, {{0, 2}});
  frontier.AddPoint({8, 8, 80, 80}, {{1, 2}});
  frontier.AddPoint({7, 7, 120, 120}, {{2, 2}});
  frontier.AddPoint({6, 6, 140, 140}, {{3, 2}});
  return frontier;
}

std::string ErrorOf(const Result<size_t>& r) { return r.ok() ? "ok: " + std::to_string(*r) : r.error().message; }

TEST(PlanLookup, AveragePowerIsEnergyOverTimePerPipelineAndPerGpu) {
  Frontier f = Sample();
  EXPECT_DOUBLE_EQ(AveragePowerW(f.points()[0]), 10.0);
  EXPECT_DOUBLE_EQ(AveragePowerPerGpuW(f, 0), 5.0);
  EXPECT_DOUBLE_EQ(AveragePowerPerGpuW(f, 4), 140.0 / 6 / 2);
  EXPECT_EQ(AveragePowerW(FrontierPoint{}), 0.0);
}

TEST(PlanLookup, PointByIndexChecksTheRange) {
  Frontier f = Sample();
  EXPECT_EQ(*PointByIndex(f, 0), 0u);
  EXPECT_EQ(*PointByIndex(f, 4), 4u);
  EXPECT_EQ(ErrorOf(PointByIndex(f, 5)), "point 5 is not on the frontier: its points are 0..4");
  EXPECT_EQ(ErrorOf(PointByIndex(f, -1)), "point -1 is not on the frontier: its points are 0..4");
  EXPECT_EQ(ErrorOf(LookUpPlan(f, {PlanQuery::Kind::kPoint, 1.5})), "point: expected an integer index, got 1.5");
  EXPECT_EQ(ErrorOf(PointByIndex(Frontier{}, 0)), "the frontier has no points");
}

TEST(PlanLookup, TimeIsTheServersRuleAndRefusesBelowTmin) {
  Frontier f = Sample();
  // The least energy no slower than T: at 9.5 s, 9 s and 8 s both cost 80 J, and the server's
  // rule keeps the first (slower) one.
  for (double t : {6.0, 6.5, 7.0, 8.0, 9.5, 10.0, 100.0}) {
    EXPECT_EQ(*PointForIterationTime(f, t), f.IndexForIterationTime(t)) << t;
  }
  EXPECT_EQ(*PointForIterationTime(f, 9.5), 1u);
  EXPECT_EQ(*PointForIterationTime(f, 7.5), 3u);
  EXPECT_EQ(*PointForIterationTime(f, 6.0), 4u);
  EXPECT_EQ(ErrorOf(PointForIterationTime(f, 5.9)),
            "no plan is as fast as 5.9 s: the fastest, T_min, takes 6 s (plan 4)");
  EXPECT_EQ(ErrorOf(PointForIterationTime(f, std::nan(""))),
            "iteration time: expected a number of seconds > 0, got nan");
  EXPECT_EQ(ErrorOf(PointForIterationTime(f, -1)), "iteration time: expected a number of seconds > 0, got -1");
}

TEST(PlanLookup, SlowdownIsAFactorOfTmin) {
  Frontier f = Sample();
  EXPECT_EQ(*PointForSlowdown(f, 1), 4u);
  EXPECT_EQ(*PointForSlowdown(f, 1.25), 3u);  // 7.5 s
  EXPECT_EQ(*PointForSlowdown(f, 2), 1u);     // 12 s: the least energy
  EXPECT_EQ(ErrorOf(PointForSlowdown(f, 0.9)), "slowdown: expected a factor >= 1 of T_min, got 0.9");
  EXPECT_EQ(ErrorOf(PointForSlowdown(f, std::numeric_limits<double>::infinity())),
            "slowdown: expected a factor >= 1 of T_min, got inf");
}

TEST(PlanLookup, PowerPerGpuIsTheFastestPlanAtOrBelowIt) {
  Frontier f = Sample();
  EXPECT_EQ(*PointForPowerPerGpu(f, 1000), 4u);
  EXPECT_EQ(*PointForPowerPerGpu(f, 140.0 / 6 / 2), 4u);  // at the power itself
  EXPECT_EQ(*PointForPowerPerGpu(f, 10), 3u);             // 8.57 W
  EXPECT_EQ(*PointForPowerPerGpu(f, 5), 2u);              // 8 s: 5 W, faster than 10 s at 5 W
  EXPECT_EQ(*PointForPowerPerGpu(f, 4.5), 1u);
  EXPECT_EQ(ErrorOf(PointForPowerPerGpu(f, 4)),
            "no plan draws 4 W per GPU or less on average: the lowest is 4.44444 W per GPU (plan 1, 9 s)");
  EXPECT_EQ(ErrorOf(LookUpPlan(f, {PlanQuery::Kind::kPowerPerGpu, 0})),
            "power per GPU: expected a number of watts > 0, got 0");
  EXPECT_EQ(*LookUpPlan(f, {PlanQuery::Kind::kPowerPerGpu, 4.5}), 1u);
  EXPECT_EQ(*LookUpPlan(f, {PlanQuery::Kind::kSlowdown, 1}), 4u);
  EXPECT_EQ(*LookUpPlan(f, {PlanQuery::Kind::kIterationTime, 8}), 2u);
  EXPECT_EQ(*LookUpPlan(f, {PlanQuery::Kind::kPoint, 3}), 3u);
}

TEST(PlanLookup, PeakPowerPerGpuIsTheFastestPlanAtOrBelowIt) {
  Frontier f = Sample();
  EXPECT_EQ(ErrorOf(PointForPeakPowerPerGpu(f, 100)),
            "this frontier has no peak 1-s power (a file written without it): compute it again with wattcut frontier");
  // Peaks per GPU (2 stages): 6, 5.5, 7, 10, 12 W.
  const double peaks[] = {12, 11, 14, 20, 24};
  for (size_t i = 0; i < 5; ++i) f.SetPeakPower(i, peaks[i]);
  EXPECT_EQ(*PointForPeakPowerPerGpu(f, 12), 4u);
  EXPECT_EQ(*PointForPeakPowerPerGpu(f, 11), 3u);
  EXPECT_EQ(*PointForPeakPowerPerGpu(f, 7), 2u);
  EXPECT_EQ(*PointForPeakPowerPerGpu(f, 6.5), 1u);  // 9 s at 5.5 W, faster than 10 s at 6 W
  EXPECT_EQ(*PointForPeakPowerPerGpu(f, 5.5), 1u);
  EXPECT_EQ(ErrorOf(PointForPeakPowerPerGpu(f, 5)),
            "no plan's peak 1-s power is 5 W per GPU or less: the lowest is 5.5 W per GPU (plan 1, 9 s)");
  EXPECT_EQ(*LookUpPlan(f, {PlanQuery::Kind::kPeakPowerPerGpu, 7}), 2u);
  EXPECT_EQ(ErrorOf(PointForPeakPowerPerGpu(f, -1)), "peak power per GPU: expected a number of watts > 0, got -1");
}

}  // namespace
}  // namespace wattcut
