#include "wattcut/deadline/schedule_following.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wattcut::deadline {
namespace {

// Two intervals of 100 s: plan 3 for 100 s, then plan 1 for 40 s and plan 2 for 60 s.
Schedule TwoIntervals() {
  Schedule s;
  ScheduledInterval a{1000, 1100, 0, 0, 0, {{3, 100, 50, 1}}, 50, 0, 0, 0};
  ScheduledInterval b{1100, 1200, 0, 0, 0, {{1, 40, 10, 1}, {2, 60, 30, 1}}, 40, 0, 0, 0};
  s.intervals = {a, b};
  return s;
}

TEST(ScheduleFollowingTest, ThePointInForceSwitchesAtEachShare) {
  const Schedule s = TwoIntervals();
  EXPECT_EQ(PointAt(s, 900), 3u);  // before the start: the first
  EXPECT_EQ(PointAt(s, 1000), 3u);
  EXPECT_EQ(PointAt(s, 1099.9), 3u);
  EXPECT_EQ(PointAt(s, 1100), 1u);
  EXPECT_EQ(PointAt(s, 1140), 2u);
  EXPECT_EQ(PointAt(s, 5000), 2u);  // done: the last
  EXPECT_FALSE(PointAt(Schedule{}, 1000).has_value());
  EXPECT_DOUBLE_EQ(NextSwitchAfter(s, 1000), 1100);
  EXPECT_DOUBLE_EQ(NextSwitchAfter(s, 1100), 1140);
  EXPECT_TRUE(std::isinf(NextSwitchAfter(s, 1140)));
}

TEST(ScheduleFollowingTest, IterationsDoneGrowWithinEachShare) {
  const Schedule s = TwoIntervals();
  EXPECT_DOUBLE_EQ(IterationsDoneBy(s, 1000), 0);
  EXPECT_DOUBLE_EQ(IterationsDoneBy(s, 1050), 25);
  EXPECT_DOUBLE_EQ(IterationsDoneBy(s, 1120), 55);
  EXPECT_DOUBLE_EQ(IterationsDoneBy(s, 1170), 75);
  EXPECT_DOUBLE_EQ(IterationsDoneBy(s, 9999), 90);
}

TEST(ScheduleFollowingTest, WhatTheScheduleCostBySomeTime) {
  Schedule s = TwoIntervals();
  s.intervals[0].price = 0.1;
  s.intervals[1].price = 0.3;
  for (auto& k : s.intervals) {
    for (auto& p : k.shares) p.power_w = 3.6e6 / 100;  // 0.01 kWh a second
  }
  const ScheduleTotals half = TotalsBy(s, 1050);
  EXPECT_DOUBLE_EQ(half.iterations, 25);
  EXPECT_DOUBLE_EQ(half.cost, 50 * 0.01 * 0.1);
  EXPECT_DOUBLE_EQ(TotalsBy(s, 1120).cost, 100 * 0.01 * 0.1 + 20 * 0.01 * 0.3);
  EXPECT_TRUE(std::isnan(TotalsBy(s, 1120).carbon_g) || TotalsBy(s, 1120).carbon_g == 0);
}

}  // namespace
}  // namespace wattcut::deadline
