#include "wattcut/base/order_statistics.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

struct Sample {
  double time_s;
};

TEST(OrderStatistics, NearestRankPercentileAndUpperMedian) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 0.99), 5);
  std::vector<float> even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(NearestRankPercentile(even, 0.5), 2);  // the lower middle: rank ceil(0.5 n)
  EXPECT_DOUBLE_EQ(UpperMedian(even), 3);                 // index n / 2
  std::vector<double> none;
  EXPECT_EQ(NearestRankPercentile(none, 0.5), 0);
  EXPECT_EQ(UpperMedian(none), 0);
}

TEST(OrderStatistics, MedianTimeStep) {
  EXPECT_DOUBLE_EQ(MedianTimeStep(std::vector<Sample>{{0}, {1}, {1.5}, {3.5}}), 1);
  EXPECT_EQ(MedianTimeStep(std::vector<Sample>{{7}}), 0);
}

}  // namespace
}  // namespace wattcut
