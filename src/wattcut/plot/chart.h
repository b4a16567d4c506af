// An x/y chart: labelled linear axes with nice ticks, line, step and scatter series,
// horizontal/vertical reference lines with labels, shaded bands, and a legend.
//
//   Chart chart("Row power", AxisSpec("time (h)"), AxisSpec("power (% of budget)", 0, 110));
//   chart.AddSeries({"row power", samples});
//   chart.AddReferenceLine({Orientation::kHorizontal, 89, "T2"});
//   Status s = chart.WriteSvg("power.svg");
//
// Line and step series with many more points than the plot has pixel columns are
// thinned to the first, minimum, maximum and last point of each column, so peaks stay
// visible and a week of 1 s samples makes a small file.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plot/svg_document.h"

namespace wattcut::plot {

struct Point {
  double x = 0.0;
  double y = 0.0;
};

enum class SeriesKind {
  kLine,     // straight segments between points
  kStep,     // value holds until the next point's x (step-after)
  kScatter,  // markers only
};

struct Series {
  Series() = default;
  Series(std::string name_, std::vector<Point> points_, SeriesKind kind_ = SeriesKind::kLine, std::string color_ = {})
      : name(std::move(name_)), points(std::move(points_)), kind(kind_), color(std::move(color_)) {}

  std::string name;  // legend entry; empty: not in the legend
  std::vector<Point> points;
  SeriesKind kind = SeriesKind::kLine;
  std::string color;   // empty: the next palette colour
  double width = 1.5;  // line width, or marker radius for scatter
  std::string dash;    // stroke-dasharray for lines, e.g. "6 3"
  // Scatter only: a label drawn beside each marker (empty, or one per point).
  std::vector<std::string> point_labels;
  bool markers = false;  // line/step: also draw a marker at each point
};

enum class Orientation { kHorizontal, kVertical };

// A line across the whole plot at x = value (vertical) or y = value (horizontal).
struct ReferenceLine {
  ReferenceLine() = default;
  ReferenceLine(Orientation orientation_, double value_, std::string label_, std::string color_ = "#555555")
      : orientation(orientation_), value(value_), label(std::move(label_)), color(std::move(color_)) {}

  Orientation orientation = Orientation::kHorizontal;
  double value = 0.0;
  std::string label;
  std::string color = "#555555";
  std::string dash = "5 4";
};

// A shaded region from..to along one axis, spanning the other.
struct Band {
  Band() = default;
  Band(Orientation orientation_, double from_, double to_, std::string label_, std::string color_ = "#999999")
      : orientation(orientation_), from(from_), to(to_), label(std::move(label_)), color(std::move(color_)) {}

  Orientation orientation = Orientation::kHorizontal;  // horizontal: a y range
  double from = 0.0;
  double to = 0.0;
  std::string label;
  std::string color = "#999999";
  double opacity = 0.15;
};

struct AxisSpec {
  AxisSpec() = default;
  AxisSpec(std::string label_) : label(std::move(label_)) {}  // NOLINT: implicit by design
  AxisSpec(std::string label_, std::optional<double> min_, std::optional<double> max_)
      : label(std::move(label_)), min(min_), max(max_) {}

  std::string label;
  std::optional<double> min;  // unset: from the data, rounded out to a tick
  std::optional<double> max;
};

class Chart {
 public:
  Chart(std::string title, AxisSpec x, AxisSpec y);

  // Pixel size of the whole picture (default 900 x 500).
  void set_size(double width, double height);

  void AddSeries(Series series);
  void AddReferenceLine(ReferenceLine line);
  void AddBand(Band band);

  SvgDocument Render() const;
  std::string ToSvg() const { return Render().ToString(); }
  Status WriteSvg(const std::string& path) const { return Render().WriteFile(path); }

 private:
  std::string title_;
  AxisSpec x_;
  AxisSpec y_;
  double width_ = 900;
  double height_ = 500;
  std::vector<Series> series_;
  std::vector<ReferenceLine> lines_;
  std::vector<Band> bands_;
};

}  // namespace wattcut::plot
