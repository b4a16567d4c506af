#include "wattcut/polca/row_charts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "wattcut/plot/color.h"
#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::polca {
namespace {

using plot::testing::XmlProblem;

double Number(const std::string& text) { return std::atof(text.c_str()); }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// Maps a data value to its pixel along one axis, from the axis's tick labels (the
// lowest and highest tick: the axes are linear).
class AxisPixels {
 public:
  // horizontal: the x axis (tick labels centred under the plot); else the y axis.
  AxisPixels(const std::string& svg, bool horizontal) {
    const std::regex tick(
        "<text x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#444444\" "
        "text-anchor=\"" +
        std::string(horizontal ? "middle\">" : "end\" dominant-baseline=\"middle\">") + "([-0-9.e+]+)</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) {
      ticks_.push_back({Number((*it)[3]), Number((*it)[horizontal ? 1 : 2])});
    }
  }
  size_t ticks() const { return ticks_.size(); }
  double operator()(double value) const {
    const auto [v0, p0] = ticks_.front();
    const auto [v1, p1] = ticks_.back();
    return p0 + (value - v0) * (p1 - p0) / (v1 - v0);
  }

 private:
  std::vector<std::pair<double, double>> ticks_;  // value, pixel
};

struct Line {
  double x1, y1, x2, y2;
};

// The <line> elements drawn with a dashed 1.2 px stroke of `color`: the reference lines.
std::vector<Line> ReferenceLines(const std::string& svg, const std::string& color) {
  std::vector<Line> lines;
  const std::regex line(
      "<line x1=\"([-0-9.]+)\" y1=\"([-0-9.]+)\" x2=\"([-0-9.]+)\" y2=\"([-0-9.]+)\" fill=\"none\" "
      "stroke=\"" +
      color + "\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it) {
    lines.push_back({Number((*it)[1]), Number((*it)[2]), Number((*it)[3]), Number((*it)[4])});
  }
  return lines;
}

// The points of the polylines stroked with `color`, one vector per polyline.
std::vector<std::vector<std::pair<double, double>>> Polylines(const std::string& svg, const std::string& color) {
  std::vector<std::vector<std::pair<double, double>>> out;
  const std::regex polyline("<polyline points=\"([^\"]*)\" fill=\"none\" stroke=\"" + color + "\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), polyline); it != std::sregex_iterator(); ++it) {
    std::vector<std::pair<double, double>> points;
    const std::string list = (*it)[1];
    const std::regex pair("(-?[0-9.]+),(-?[0-9.]+)");
    for (auto p = std::sregex_iterator(list.begin(), list.end(), pair); p != std::sregex_iterator(); ++p) {
      points.emplace_back(Number((*p)[1]), Number((*p)[2]));
    }
    out.push_back(points);
  }
  return out;
}

// Centres of the circles filled with `color` and radius `r`.
std::vector<std::pair<double, double>> Circles(const std::string& svg, const std::string& color, const std::string& r) {
  std::vector<std::pair<double, double>> out;
  const std::regex circle("<circle cx=\"([-0-9.]+)\" cy=\"([-0-9.]+)\" r=\"" + r + "\" fill=\"" + color + "\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
    out.emplace_back(Number((*it)[1]), Number((*it)[2]));
  }
  return out;
}

// Coordinates are written with two decimals.
constexpr double kPixel = 0.02;

class RowChartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = *BuiltInConfig("a100");
    config_.row.baseline_servers = 6;
    config_.control.telemetry_period_s = 60;
    config_.policy.t1 = 0.80;
    config_.policy.t2 = 0.89;
    config_.policy.brake = 1.00;
    // Two hours of one-minute readings: a ramp from 60 % to 105 % of the budget and
    // back; the unconstrained run is 5 points higher.
    run_.policy = PolicyKind::kPolca;
    run_.servers = 7;
    run_.duration_s = 7200;
    reference_ = run_;
    reference_.policy = PolicyKind::kNone;
    for (int i = 0; i < 120; ++i) {
      const double fraction = 0.60 + 0.45 * (i < 60 ? i : 119 - i) / 59.0;
      run_.power_samples.push_back(static_cast<float>(fraction));
      reference_.power_samples.push_back(static_cast<float>(fraction + 0.05));
    }
    // T1 from 20 to 40 min, T2 low from 30 to 35 min; the brake engages twice (the
    // second action with the brake on does not engage it again).
    run_.actions = {{1200, PolicyLevel::kT1, false},    {1800, PolicyLevel::kT2Low, false},
                    {2100, PolicyLevel::kT1, true},     {2160, PolicyLevel::kT1, true},
                    {2220, PolicyLevel::kT1, false},    {2400, PolicyLevel::kNormal, false},
                    {4800, PolicyLevel::kNormal, true}, {4900, PolicyLevel::kNormal, false}};
  }

  PolcaConfig config_;
  RowRunResult run_;
  RowRunResult reference_;
};

TEST_F(RowChartsTest, RowPowerShowsBothRunsTheShadedLevelsTheBrakesAndTheThresholds) {
  const std::string svg = RowPowerChartSvg(config_, run_, reference_);
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  for (const char* text : {">Row power: polca, 7 servers (6 provisioned)<", ">time (hours)<",
                           ">row power (% of budget)<", ">polca<", ">unconstrained<", ">brake (2)<",
                           ">above T1 (shaded)<", ">above T2 (shaded)<", ">T1 80 %<", ">T2 89 %<", ">brake 100 %<"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  const AxisPixels x(svg, true), y(svg, false);
  ASSERT_GE(x.ticks(), 2u);
  ASSERT_GE(y.ticks(), 2u);
  // Each threshold is a horizontal line at its percentage.
  for (auto [color, percent] : {std::pair{"#e6a100", 80.0}, {"#e05a00", 89.0}, {"#c00000", 100.0}}) {
    const std::vector<Line> lines = ReferenceLines(svg, color);
    ASSERT_EQ(lines.size(), 1u) << color;
    EXPECT_NEAR(lines[0].y1, y(percent), kPixel) << color;
    EXPECT_NEAR(lines[0].y2, y(percent), kPixel) << color;
    EXPECT_NEAR(lines[0].x1, x(0), kPixel) << color;
    EXPECT_NEAR(lines[0].x2, x(2), kPixel) << color;  // the axis ends at the run's 2 h
  }
  // Every reading of the run, at the end of its minute (in hours).
  const auto runs = Polylines(svg, "#1f77b4");
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].size(), 120u);
  for (size_t i : {0, 59, 119}) {
    EXPECT_NEAR(runs[0][i].first, x((i + 1) / 60.0), kPixel) << i;
    EXPECT_NEAR(runs[0][i].second, y(100.0 * run_.power_samples[i]), kPixel) << i;
  }
  const auto references = Polylines(svg, "#b0b0b0");
  ASSERT_EQ(references.size(), 1u);
  EXPECT_NEAR(references[0][59].second, y(100.0 * reference_.power_samples[59]), kPixel);
  // Shading: above T1 from 20 to 40 min, above T2 from 30 to 35 min.
  auto band = [&](const std::string& color) {
    std::smatch m;
    const std::regex rect("<rect x=\"([-0-9.]+)\" y=\"[-0-9.]+\" width=\"([-0-9.]+)\" height=\"[-0-9.]+\" fill=\"" +
                          color + "\" opacity=\"0.15\"/>");
    EXPECT_EQ(Count(svg, "fill=\"" + color + "\" opacity"), 1u) << color;
    if (!std::regex_search(svg, m, rect)) return std::pair{-1.0, -1.0};
    return std::pair{Number(m[1]), Number(m[1]) + Number(m[2])};
  };
  const auto [t1_from, t1_to] = band("#f2c94c");
  EXPECT_NEAR(t1_from, x(20 / 60.0), kPixel);
  EXPECT_NEAR(t1_to, x(40 / 60.0), 2 * kPixel);
  const auto [t2_from, t2_to] = band("#eb5757");
  EXPECT_NEAR(t2_from, x(30 / 60.0), kPixel);
  EXPECT_NEAR(t2_to, x(35 / 60.0), 2 * kPixel);
  // A marker at each engagement, on the reading of its period (plus the legend's).
  const auto brakes = Circles(svg, "#c00000", "3.5");
  ASSERT_EQ(brakes.size(), 2u);
  EXPECT_NEAR(brakes[0].first, x(2100 / 3600.0), kPixel);
  EXPECT_NEAR(brakes[0].second, y(100.0 * run_.power_samples[35]), kPixel);
  EXPECT_NEAR(brakes[1].first, x(4800 / 3600.0), kPixel);
  EXPECT_NEAR(brakes[1].second, y(100.0 * run_.power_samples[80]), kPixel);
}

TEST_F(RowChartsTest, RowPowerOfTheUnconstrainedRunAloneAndOfAWeekInDays) {
  const std::string alone = RowPowerChartSvg(config_, reference_, reference_);
  ASSERT_EQ(XmlProblem(alone), "");
  EXPECT_NE(alone.find(">none<"), std::string::npos);
  for (const char* absent : {">unconstrained<", "(shaded)<", ">brake ("}) {
    EXPECT_EQ(alone.find(absent), std::string::npos) << absent;
  }
  EXPECT_EQ(Polylines(alone, "#b0b0b0").size(), 0u);

  RowRunResult week = run_;
  week.duration_s = 7 * 86400;
  week.policy = PolicyKind::kBrakeOnly;
  const std::string days = RowPowerChartSvg(config_, week, RowRunResult{});
  ASSERT_EQ(XmlProblem(days), "");
  EXPECT_NE(days.find(">time (days)<"), std::string::npos);
  EXPECT_EQ(days.find("(shaded)<"), std::string::npos);        // the brake-only policy has no levels
  EXPECT_EQ(days.find(">unconstrained<"), std::string::npos);  // no reference readings
  const AxisPixels x(days, true);
  const std::vector<Line> brake = ReferenceLines(days, "#c00000");
  ASSERT_EQ(brake.size(), 1u);
  EXPECT_NEAR(brake[0].x2, x(7), kPixel);
}

TEST_F(RowChartsTest, PowerCdfRisesToOneWithTheThresholdsAsVerticalLines) {
  const std::string svg = PowerCdfChartSvg(config_, run_, reference_);
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  for (const char* text : {">CDF of row power (7 servers, 0.1 days of 60 s readings)<", ">row power (% of budget)<",
                           ">fraction of time at or below<", ">polca<", ">unconstrained<", ">T1 80 %<"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  const AxisPixels x(svg, true), y(svg, false);
  for (auto [color, percent] : {std::pair{"#e6a100", 80.0}, {"#e05a00", 89.0}, {"#c00000", 100.0}}) {
    const std::vector<Line> lines = ReferenceLines(svg, color);
    ASSERT_EQ(lines.size(), 1u) << color;
    EXPECT_NEAR(lines[0].x1, x(percent), kPixel) << color;
    EXPECT_NEAR(lines[0].x2, x(percent), kPixel) << color;
    EXPECT_NEAR(lines[0].y1, y(1), kPixel) << color;  // from the top of the plot (fraction 1)
    EXPECT_NEAR(lines[0].y2, y(0), kPixel) << color;  // to its bottom
  }
  const auto cdf = Polylines(svg, "#1f77b4");
  ASSERT_EQ(cdf.size(), 1u);
  ASSERT_GE(cdf[0].size(), 2u);
  for (size_t i = 1; i < cdf[0].size(); ++i) {
    EXPECT_GE(cdf[0][i].first, cdf[0][i - 1].first) << i;    // power sorted
    EXPECT_LE(cdf[0][i].second, cdf[0][i - 1].second) << i;  // fraction rises (up is smaller y)
  }
  EXPECT_NEAR(cdf[0].front().first, x(60), kPixel);
  EXPECT_NEAR(cdf[0].front().second, y(1.0 / 120), kPixel);
  EXPECT_NEAR(cdf[0].back().first, x(105), kPixel);
  EXPECT_NEAR(cdf[0].back().second, y(1), kPixel);
  const auto reference = Polylines(svg, "#b0b0b0");
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_NEAR(reference[0].back().first, x(110), kPixel);
}

SweepResult TwoPolicySweep() {
  SweepResult sweep;
  sweep.baseline_servers = 6;
  sweep.added_fractions = {0.0, 0.5};
  // Added-major, then policy: polca, brake-only.
  const int brakes[2][2] = {{0, 1}, {2, 5}};  // [policy][added]
  const double high_p99[2][2] = {{0.01, 0.03}, {0.02, 0.08}};
  const double low_p50[2][2] = {{0.02, 0.04}, {0.01, 0.30}};
  for (int a = 0; a < 2; ++a) {
    for (int k = 0; k < 2; ++k) {
      SweepPoint p;
      p.added_fraction = sweep.added_fractions[a];
      p.servers = 6 + 3 * a;
      p.run.policy = k == 0 ? PolicyKind::kPolca : PolicyKind::kBrakeOnly;
      p.run.brake_events = brakes[k][a];
      p.impact.high.p99_latency = high_p99[k][a];
      p.impact.high.p50_latency = high_p99[k][a] / 4;
      p.impact.low.p50_latency = low_p50[k][a];
      p.impact.low.p99_latency = 2 * low_p50[k][a];
      sweep.points.push_back(p);
    }
  }
  return sweep;
}

TEST_F(RowChartsTest, SweepPolicyNamesFollowTheFirstPoints) {
  EXPECT_EQ(SweepPolicyNames(TwoPolicySweep()), (std::vector<std::string>{"polca", "brake-only"}));
  EXPECT_TRUE(SweepPolicyNames(SweepResult{}).empty());
}

TEST_F(RowChartsTest, SweepBrakesHasAMarkerPerPointOfEachPolicy) {
  const SweepResult sweep = TwoPolicySweep();
  const std::string svg = SweepBrakesChartSvg(config_, sweep);
  ASSERT_EQ(XmlProblem(svg), "") << svg;
  for (const char* text : {">Power-brake events vs added servers (6-server row budget)<", ">servers added (%)<",
                           ">brake events<", ">polca<", ">brake-only<"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  EXPECT_LT(svg.find(">polca<"), svg.find(">brake-only<"));  // legend in the sweep's order
  const AxisPixels x(svg, true), y(svg, false);
  const int brakes[2][2] = {{0, 1}, {2, 5}};
  for (size_t k = 0; k < 2; ++k) {
    const auto markers = Circles(svg, plot::PaletteColor(k), "3");
    ASSERT_EQ(markers.size(), 2u) << k;
    for (size_t a = 0; a < 2; ++a) {
      EXPECT_NEAR(markers[a].first, x(100 * sweep.added_fractions[a]), kPixel) << k << " " << a;
      EXPECT_NEAR(markers[a].second, y(brakes[k][a]), kPixel) << k << " " << a;
    }
    EXPECT_EQ(Polylines(svg, plot::PaletteColor(k)).size(), 1u) << k;
  }
}

TEST_F(RowChartsTest, SweepLatencyDrawsP50AndP99PerPolicyAgainstTheClassSlos) {
  const SweepResult sweep = TwoPolicySweep();
  for (PriorityClass priority : {PriorityClass::kHigh, PriorityClass::kLow}) {
    const bool high = priority == PriorityClass::kHigh;
    const std::string svg = SweepLatencyChartSvg(sweep, priority);
    ASSERT_EQ(XmlProblem(svg), "") << svg;
    for (const std::string& text :
         {std::string(high ? ">High" : ">Low") + "-priority latency impact vs added servers<",
          std::string(">servers added (%)<"), std::string(">latency impact vs unconstrained (%)<"),
          std::string(">polca P50<"), std::string(">polca P99<"), std::string(">brake-only P50<"),
          std::string(">brake-only P99<")}) {
      EXPECT_NE(svg.find(text), std::string::npos) << text;
    }
    const AxisPixels x(svg, true), y(svg, false);
    const std::vector<Line> slos = ReferenceLines(svg, "#2ca02c");
    ASSERT_EQ(slos.size(), 2u);
    EXPECT_NEAR(slos[0].y1, y(high ? 1 : 5), kPixel);
    EXPECT_NEAR(slos[1].y1, y(high ? 5 : 50), kPixel);
    EXPECT_NE(svg.find(high ? ">P50 SLO 1 %<" : ">P50 SLO 5 %<"), std::string::npos);
    EXPECT_NE(svg.find(high ? ">P99 SLO 5 %<" : ">P99 SLO 50 %<"), std::string::npos);
    // brake-only's P50 (solid) and P99 (dashed) lines, in percent.
    const auto lines = Polylines(svg, plot::PaletteColor(1));
    ASSERT_EQ(lines.size(), 2u);
    for (size_t a = 0; a < 2; ++a) {
      const PriorityImpact& impact = high ? sweep.points[2 * a + 1].impact.high : sweep.points[2 * a + 1].impact.low;
      EXPECT_NEAR(lines[0][a].first, x(100 * sweep.added_fractions[a]), kPixel);
      EXPECT_NEAR(lines[0][a].second, y(100 * impact.p50_latency), kPixel);
      EXPECT_NEAR(lines[1][a].second, y(100 * impact.p99_latency), kPixel);
    }
    EXPECT_EQ(Count(svg, "stroke-dasharray=\"6 3\""), 2u * 2);  // P99 lines and their legend entries
  }
}

}  // namespace
}  // namespace wattcut::polca
