#include "wattcut/plot/axis.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wattcut::plot {
namespace {

TEST(NiceTicks, ChoosesRoundStepsCoveringTheData) {
  Ticks t = NiceTicks(0, 1, 5);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.hi, 1);
  EXPECT_EQ(t.values.size(), 6u);

  t = NiceTicks(3, 97, 5);
  EXPECT_DOUBLE_EQ(t.step, 20);
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.hi, 100);

  t = NiceTicks(0, 10, 4);
  EXPECT_DOUBLE_EQ(t.step, 2.5);

  t = NiceTicks(-37, 12, 5);
  EXPECT_DOUBLE_EQ(t.step, 10);
  EXPECT_DOUBLE_EQ(t.lo, -40);
  EXPECT_DOUBLE_EQ(t.hi, 20);
  EXPECT_DOUBLE_EQ(t.values[4], 0.0);
  EXPECT_FALSE(std::signbit(t.values[4]));
}

TEST(NiceTicks, HandlesNoiseDegenerateAndNonFiniteRanges) {
  Ticks t = NiceTicks(0.1 + 0.2, 0.9000000000000001, 6);  // floating noise is not a new tick
  EXPECT_DOUBLE_EQ(t.step, 0.1);
  EXPECT_NEAR(t.lo, 0.3, 1e-12);
  EXPECT_NEAR(t.hi, 0.9, 1e-12);

  t = NiceTicks(5, 5);
  EXPECT_LT(t.lo, 5);
  EXPECT_GT(t.hi, 5);
  t = NiceTicks(0, 0);
  EXPECT_LT(t.lo, 0);
  EXPECT_GT(t.hi, 0);
  t = NiceTicks(10, 0);  // reversed
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.hi, 10);
  t = NiceTicks(std::nan(""), 1);
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.hi, 1);

  for (double span : {1e-6, 0.37, 13.0, 604800.0, 7.3e9}) {
    t = NiceTicks(0, span, 6);
    EXPECT_GE(t.values.size(), 3u) << span;
    EXPECT_LE(t.values.size(), 8u) << span;
    EXPECT_GE(t.hi, span);
  }
}

TEST(FormatTick, UsesDecimalsOfTheStep) {
  EXPECT_EQ(FormatTick(0.25, 0.25), "0.25");
  EXPECT_EQ(FormatTick(1.5, 0.5), "1.5");
  EXPECT_EQ(FormatTick(40, 20), "40");
  EXPECT_EQ(FormatTick(2, 0.5), "2.0");
  EXPECT_EQ(FormatTick(-0.0, 1), "0");
  EXPECT_EQ(FormatTick(2e7, 1e7), "2e+07");
}

TEST(LinearScale, MapsForwardAndBackward) {
  LinearScale x(0, 10, 100, 200);
  EXPECT_DOUBLE_EQ(x(5), 150);
  LinearScale y(0, 100, 400, 0);  // pixels grow downwards
  EXPECT_DOUBLE_EQ(y(25), 300);
  LinearScale flat(3, 3, 0, 10);
  EXPECT_DOUBLE_EQ(flat(3), 5);
}

}  // namespace
}  // namespace wattcut::plot
