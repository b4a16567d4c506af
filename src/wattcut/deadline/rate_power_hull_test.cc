#include "wattcut/deadline/rate_power_hull.h"

#include <gtest/gtest.h>

#include <limits>

namespace wattcut::deadline {
namespace {

constexpr double kAll = std::numeric_limits<double>::infinity();

TEST(RatePowerHullTest, KeepsTheLowerConvexChainFromTheSlowestToTheFastestPlan) {
  // (rate, power): point 2 lies above the segment 1-3, point 4 on the segment 3-5.
  const std::vector<PlanRate> plans{{0, 1.0, 100, 100}, {1, 2.0, 150, 150}, {2, 2.5, 190, 190},
                                    {3, 3.0, 210, 210}, {4, 3.5, 255, 255}, {5, 4.0, 300, 300}};
  RatePowerHull h(plans, kAll);
  ASSERT_EQ(h.vertices().size(), 4u);
  EXPECT_EQ(h.vertices()[0].point, 0u);
  EXPECT_EQ(h.vertices()[1].point, 1u);
  EXPECT_EQ(h.vertices()[2].point, 3u);
  EXPECT_EQ(h.vertices()[3].point, 5u);
  for (size_t e = 0; e + 1 < h.vertices().size() - 1; ++e) EXPECT_LT(h.slope(e), h.slope(e + 1));
  EXPECT_DOUBLE_EQ(h.slope(0), 50);
}

TEST(RatePowerHullTest, ABudgetKeepsOnlyThePlansUnderIt) {
  const std::vector<PlanRate> plans{{0, 1.0, 100, 120}, {1, 2.0, 150, 170}, {2, 3.0, 210, 260}};
  RatePowerHull h(plans, 200);
  ASSERT_EQ(h.vertices().size(), 2u);
  EXPECT_EQ(h.vertices().back().point, 1u);
  EXPECT_TRUE(RatePowerHull(plans, 110).empty());
}

TEST(RatePowerHullTest, AtOneRateTheLeastPowerIsKept) {
  const std::vector<PlanRate> plans{{0, 1.0, 120, 120}, {1, 1.0, 100, 100}, {2, 2.0, 150, 150}};
  RatePowerHull h(plans, kAll);
  ASSERT_EQ(h.vertices().size(), 2u);
  EXPECT_EQ(h.vertices().front().point, 1u);
}

}  // namespace
}  // namespace wattcut::deadline
