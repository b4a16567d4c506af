#include "wattcut/plot/color.h"

#include <gtest/gtest.h>

namespace wattcut::plot {
namespace {

TEST(PaletteColor, IsDistinctThenWraps) {
  EXPECT_EQ(PaletteColor(0), "#1f77b4");
  EXPECT_NE(PaletteColor(0), PaletteColor(1));
  EXPECT_EQ(PaletteColor(10), PaletteColor(0));
}

TEST(ColorRamp, MapsEndsClampsAndHandlesEmptyRange) {
  ColorRamp ramp(1000, 1400);
  EXPECT_EQ(ramp.ColorOf(1000), "#440154");
  EXPECT_EQ(ramp.ColorOf(1400), "#fde725");
  EXPECT_EQ(ramp.ColorOf(900), "#440154");
  EXPECT_EQ(ramp.ColorOf(5000), "#fde725");
  EXPECT_EQ(ramp.ColorOf(1200), "#21918c");  // the middle anchor
  EXPECT_NE(ramp.ColorOf(1100), ramp.ColorOf(1300));
  EXPECT_EQ(ColorRamp(5, 5).ColorOf(1), "#21918c");
  EXPECT_EQ(ColorRamp(1400, 1000).ColorOf(1400), "#fde725");  // reversed bounds are sorted
  auto stops = ramp.GradientStops();
  ASSERT_EQ(stops.size(), 5u);
  EXPECT_DOUBLE_EQ(stops.front().first, 0.0);
  EXPECT_DOUBLE_EQ(stops.back().first, 1.0);
}

}  // namespace
}  // namespace wattcut::plot
