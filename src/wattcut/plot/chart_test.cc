#include "wattcut/plot/chart.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::plot {
namespace {

using testing::XmlProblem;

// The (x, y) pairs of every polyline in `svg`, one vector per polyline.
std::vector<std::vector<std::pair<double, double>>> Polylines(const std::string& svg) {
  std::vector<std::vector<std::pair<double, double>>> out;
  std::regex polyline("<polyline points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it) {
    std::vector<std::pair<double, double>> points;
    std::string list = (*it)[1];
    std::regex pair("(-?[0-9.]+),(-?[0-9.]+)");
    for (auto p = std::sregex_iterator(list.begin(), list.end(), pair); p != std::sregex_iterator(); ++p) {
      points.emplace_back(std::atof((*p)[1].str().c_str()), std::atof((*p)[2].str().c_str()));
    }
    out.push_back(points);
  }
  return out;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

// Issue 54: "estimated under the ceilings (after)" ran off the right edge of polca replay's
// row_power.svg: the legend was 190 px whatever its names. It is now as wide as its longest.
TEST(Chart, ALongLegendNameStaysInsideThePicture) {
  Chart chart("Row power", AxisSpec("time (h)"), AxisSpec("power (kW)"));
  const std::string name = "estimated under the ceilings (after)";
  chart.AddSeries({name, {{0, 70}, {1, 85}}});
  chart.AddSeries({"measured (before)", {{0, 72}, {1, 88}}});
  const std::string svg = chart.ToSvg();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("<svg[^>]* width=\"([0-9.]+)\"")));
  const double width = std::atof(m[1].str().c_str());
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("<text x=\"([0-9.]+)\"[^>]*>" + std::string("estimated under"))));
  const double x = std::atof(m[1].str().c_str());
  EXPECT_LE(x + 6.6 * static_cast<double>(name.size()), width) << svg.substr(0, 400);
  // A threshold's label reads over data near it: it has a white halo (issue 54: T1 and T2 sat
  // under polca simulate's data band).
  chart.AddReferenceLine({Orientation::kHorizontal, 80, "T1 = 80 %"});
  const std::string with_line = chart.ToSvg();
  ASSERT_TRUE(std::regex_search(with_line, m, std::regex("<text [^>]*>T1 = 80 %</text>")));
  EXPECT_NE(m.str().find("stroke=\"white\""), std::string::npos) << m.str();
  EXPECT_NE(m.str().find("paint-order=\"stroke\""), std::string::npos) << m.str();
}

TEST(Chart, RendersSeriesLinesBandsAndLegendAsWellFormedSvg) {
  Chart chart("Row power & <thresholds>", AxisSpec("time (h)"), AxisSpec("power (%)"));
  chart.AddSeries({"row power", {{0, 70}, {1, 85}, {2, 78}}});
  chart.AddSeries({"lock", {{0, 1}, {1, 2}}, SeriesKind::kStep});
  Series brakes("brakes", {{1.5, 101}}, SeriesKind::kScatter);
  brakes.point_labels = {"brake"};
  chart.AddSeries(brakes);
  chart.AddReferenceLine({Orientation::kHorizontal, 89, "T2 = 89 %"});
  chart.AddReferenceLine({Orientation::kVertical, 1, "cap"});
  chart.AddBand({Orientation::kHorizontal, 80, 89, "T1..T2"});
  std::string svg = chart.ToSvg();
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_NE(svg.find("Row power &amp; &lt;thresholds&gt;"), std::string::npos);
  for (const char* text : {">row power<", ">lock<", ">brakes<", ">T2 = 89 %<", ">cap<", ">T1..T2<", ">time (h)<",
                           ">power (%)<", ">brake<"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  // Palette colours were assigned in order.
  EXPECT_NE(svg.find("stroke=\"#1f77b4\""), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#d62728\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#2ca02c\""), std::string::npos);
  // The step series has its corner: (0,1) (1,1) (1,2) -> 3 points.
  auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].size(), 3u);
  ASSERT_EQ(lines[1].size(), 3u);
  EXPECT_DOUBLE_EQ(lines[1][1].first, lines[1][2].first);
  EXPECT_DOUBLE_EQ(lines[1][0].second, lines[1][1].second);
}

TEST(Chart, MapsDataInsideThePlotWithHigherValuesHigherUp) {
  Chart chart("t", AxisSpec("x"), AxisSpec("y"));
  chart.set_size(600, 400);
  chart.AddSeries({"s", {{0, 0}, {10, 100}}});
  auto lines = Polylines(chart.ToSvg());
  ASSERT_EQ(lines.size(), 1u);
  auto [x0, y0] = lines[0][0];
  auto [x1, y1] = lines[0][1];
  EXPECT_LT(x0, x1);
  EXPECT_GT(y0, y1);  // y grows downwards in SVG
  for (auto [x, y] : lines[0]) {
    EXPECT_GE(x, 0);
    EXPECT_LE(x, 600);
    EXPECT_GE(y, 0);
    EXPECT_LE(y, 400);
  }
}

TEST(Chart, ExplicitAxisBoundsAreUsedExactly) {
  Chart chart("t", AxisSpec("x", 0, 10), AxisSpec("y", 50, 110));
  chart.AddSeries({"s", {{0, 50}, {10, 110}}});
  std::string svg = chart.ToSvg();
  auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  // The data ends sit exactly on the plot's corners (plot box drawn as the last rect).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m,
                                std::regex("<rect x=\"([0-9.]+)\" y=\"([0-9.]+)\" width=\"([0-9.]+)\" "
                                           "height=\"([0-9.]+)\" fill=\"none\" stroke=\"#888888\"")));
  double px = std::atof(m[1].str().c_str()), py = std::atof(m[2].str().c_str());
  double pw = std::atof(m[3].str().c_str()), ph = std::atof(m[4].str().c_str());
  EXPECT_NEAR(lines[0][0].first, px, 0.01);
  EXPECT_NEAR(lines[0][0].second, py + ph, 0.01);
  EXPECT_NEAR(lines[0][1].first, px + pw, 0.01);
  EXPECT_NEAR(lines[0][1].second, py, 0.01);
  EXPECT_NE(svg.find(">110<"), std::string::npos);  // tick at the explicit end
}

TEST(Chart, ThinsLongSeriesButKeepsPeaks) {
  Chart chart("t", AxisSpec("x"), AxisSpec("y"));
  std::vector<Point> points;
  for (int i = 0; i < 200000; ++i) points.push_back({static_cast<double>(i), i == 123457 ? 500.0 : (i % 7) * 1.0});
  chart.AddSeries({"long", points});
  std::string svg = chart.ToSvg();
  EXPECT_EQ(XmlProblem(svg), "");
  auto lines = Polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LT(lines[0].size(), 5000u);
  double top = 1e9;
  for (auto [x, y] : lines[0]) top = std::min(top, y);
  EXPECT_NEAR(top, 40, 0.01);  // the spike reaches the top of the plot (margin 40 px)
  EXPECT_LT(svg.size(), 200000u);
}

TEST(Chart, EmptyChartStillRenders) {
  Chart chart("nothing", AxisSpec("x"), AxisSpec("y"));
  std::string svg = chart.ToSvg();
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(Count(svg, "<polyline"), 0u);
}

}  // namespace
}  // namespace wattcut::plot
