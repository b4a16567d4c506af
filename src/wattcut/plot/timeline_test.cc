#include "wattcut/plot/timeline.h"

#include <gtest/gtest.h>

#include "wattcut/plot/color.h"
#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::plot {
namespace {

using testing::XmlProblem;

TEST(Timeline, DrawsLanesBoxesAndColourScale) {
  Timeline t("1F1B <schedule>", "time (ms)");
  int s0 = t.AddLane("stage 0");
  int s1 = t.AddLane("stage 1");
  EXPECT_EQ(s0, 0);
  EXPECT_EQ(s1, 1);
  t.SetColorScale("SM frequency (MHz)", 1000, 1400);
  t.AddBox({s0, 0, 50, 1400, "F1"});
  t.AddBox({s1, 50, 100, 1000, "B1"});
  t.AddBox({7, 0, 1000, 0, "ignored"});
  std::string svg = t.ToSvg();
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("1F1B &lt;schedule&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">stage 0<"), std::string::npos);
  EXPECT_NE(svg.find(">stage 1<"), std::string::npos);
  EXPECT_NE(svg.find(">SM frequency (MHz)<"), std::string::npos);
  EXPECT_NE(svg.find("fill=\"" + ColorRamp(1000, 1400).ColorOf(1400) + "\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"" + ColorRamp(1000, 1400).ColorOf(1000) + "\""), std::string::npos);
  EXPECT_NE(svg.find("url(#color-scale)"), std::string::npos);
  EXPECT_EQ(svg.find("ignored"), std::string::npos);
  // The box on a later lane is drawn lower.
  size_t f1 = svg.find("<title>F1:");
  size_t b1 = svg.find("<title>B1:");
  ASSERT_NE(f1, std::string::npos);
  ASSERT_NE(b1, std::string::npos);
  auto y_after = [&](size_t at) {
    size_t y = svg.find(" y=\"", at);
    return std::atof(svg.c_str() + y + 4);
  };
  EXPECT_LT(y_after(f1), y_after(b1));
  // The time axis covers the boxes: 0 and 100 are ticks.
  EXPECT_NE(svg.find(">100<"), std::string::npos);
}

TEST(Timeline, ExplicitColoursAndLegendWithoutScale) {
  Timeline t("t", "s");
  int lane = t.AddLane("gpu");
  TimelineBox forward(lane, 0, 1, 0, "fwd");
  forward.color = "#123456";
  t.AddBox(forward);
  t.AddBox({lane, 1, 2, 0});
  t.AddLegendEntry("forward", "#123456");
  std::string svg = t.ToSvg();
  ASSERT_EQ(XmlProblem(svg), "");
  EXPECT_NE(svg.find("fill=\"#123456\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#9e9e9e\""), std::string::npos);  // no scale: grey
  EXPECT_NE(svg.find(">forward<"), std::string::npos);
  EXPECT_EQ(svg.find("linearGradient"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::plot
