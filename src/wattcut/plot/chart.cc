#include "wattcut/plot/chart.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "wattcut/plot/axis.h"
#include "wattcut/plot/color.h"

namespace wattcut::plot {
namespace {

constexpr double kMarginLeft = 72;
constexpr double kMarginTop = 40;
constexpr double kMarginBottom = 52;
constexpr double kLegendWidth = 190;
// A legend entry's text at 12 px: about this many pixels a character (sans-serif, mixed case),
// so that the legend is as wide as its longest name and no name runs off the picture.
constexpr double kLegendCharWidth = 6.6;

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// The domain and the ticks inside it for one axis.
struct AxisLayout {
  double lo;
  double hi;
  Ticks ticks;
};

AxisLayout LayOut(const AxisSpec& spec, Range data, int target_ticks) {
  if (spec.min) data.Add(*spec.min);
  if (spec.max) data.Add(*spec.max);
  if (data.empty()) data = Range{0.0, 1.0};
  Ticks ticks = NiceTicks(spec.min.value_or(data.lo), spec.max.value_or(data.hi), target_ticks);
  AxisLayout layout{spec.min.value_or(ticks.lo), spec.max.value_or(ticks.hi), ticks};
  if (layout.hi <= layout.lo) layout.hi = layout.lo + ticks.step;
  std::erase_if(layout.ticks.values, [&](double v) {
    double eps = ticks.step * 1e-6;
    return v < layout.lo - eps || v > layout.hi + eps;
  });
  return layout;
}

// Step-after points become a polyline with explicit corners.
std::vector<Point> StepCorners(const std::vector<Point>& points) {
  std::vector<Point> out;
  out.reserve(points.size() * 2);
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) out.push_back({points[i].x, points[i - 1].y});
    out.push_back(points[i]);
  }
  return out;
}

// Keeps the first, min, max and last point of each pixel column, in x order.
std::vector<std::pair<double, double>> Thin(const std::vector<std::pair<double, double>>& pixels, double plot_width) {
  if (pixels.size() <= static_cast<size_t>(plot_width) * 4) return pixels;
  std::vector<std::pair<double, double>> out;
  size_t i = 0;
  while (i < pixels.size()) {
    long column = std::lround(std::floor(pixels[i].first));
    size_t first = i, lowest = i, highest = i, last = i;
    while (i < pixels.size() && std::lround(std::floor(pixels[i].first)) == column) {
      if (pixels[i].second < pixels[lowest].second) lowest = i;
      if (pixels[i].second > pixels[highest].second) highest = i;
      last = i;
      ++i;
    }
    size_t picks[4] = {first, std::min(lowest, highest), std::max(lowest, highest), last};
    size_t previous = std::numeric_limits<size_t>::max();
    for (size_t p : picks) {
      if (p != previous) out.push_back(pixels[p]);
      previous = p;
    }
  }
  return out;
}

}  // namespace

Chart::Chart(std::string title, AxisSpec x, AxisSpec y)
    : title_(std::move(title)), x_(std::move(x)), y_(std::move(y)) {}

void Chart::set_size(double width, double height) {
  width_ = std::max(width, kMarginLeft + kLegendWidth + 100);
  height_ = std::max(height, kMarginTop + kMarginBottom + 100);
}

void Chart::AddSeries(Series series) {
  if (series.color.empty()) series.color = PaletteColor(series_.size());
  series_.push_back(std::move(series));
}

void Chart::AddReferenceLine(ReferenceLine line) { lines_.push_back(std::move(line)); }

void Chart::AddBand(Band band) { bands_.push_back(std::move(band)); }

SvgDocument Chart::Render() const {
  Range xr, yr;
  for (const Series& s : series_) {
    for (const Point& p : s.points) {
      xr.Add(p.x);
      yr.Add(p.y);
    }
  }
  for (const ReferenceLine& l : lines_) (l.orientation == Orientation::kVertical ? xr : yr).Add(l.value);
  for (const Band& b : bands_) {
    Range& r = b.orientation == Orientation::kVertical ? xr : yr;
    r.Add(b.from);
    r.Add(b.to);
  }

  double legend_w = kLegendWidth;
  for (const Series& s : series_) {
    legend_w = std::max(legend_w, 16 + 32 + kLegendCharWidth * static_cast<double>(s.name.size()) + 8);
  }
  legend_w = std::min(legend_w, width_ / 2);  // the plot keeps at least half the width
  const double plot_x0 = kMarginLeft;
  const double plot_y0 = kMarginTop;
  const double plot_w = width_ - kMarginLeft - legend_w;
  const double plot_h = height_ - kMarginTop - kMarginBottom;
  AxisLayout xa = LayOut(x_, xr, std::max(2, static_cast<int>(plot_w / 90)));
  AxisLayout ya = LayOut(y_, yr, std::max(2, static_cast<int>(plot_h / 60)));
  LinearScale sx(xa.lo, xa.hi, plot_x0, plot_x0 + plot_w);
  LinearScale sy(ya.lo, ya.hi, plot_y0 + plot_h, plot_y0);

  SvgDocument doc(width_, height_);
  doc.Rect(0, 0, width_, height_, Style::Fill("white"));
  doc.Text(width_ / 2, 24, title_, TextStyle::Sized(16).Anchor("middle").Bold());

  // Grid and ticks.
  const Style grid = Style::Stroke("#e3e3e3", 1);
  const TextStyle tick_text = TextStyle::Sized(11).Color("#444444");
  for (double v : xa.ticks.values) {
    double x = sx(v);
    doc.Line(x, plot_y0, x, plot_y0 + plot_h, grid);
    TextStyle t = tick_text;
    t.anchor = "middle";
    doc.Text(x, plot_y0 + plot_h + 16, FormatTick(v, xa.ticks.step), t);
  }
  for (double v : ya.ticks.values) {
    double y = sy(v);
    doc.Line(plot_x0, y, plot_x0 + plot_w, y, grid);
    TextStyle t = tick_text;
    t.anchor = "end";
    t.baseline = "middle";
    doc.Text(plot_x0 - 6, y, FormatTick(v, ya.ticks.step), t);
  }
  doc.Text(plot_x0 + plot_w / 2, height_ - 12, x_.label, TextStyle::Sized(13).Anchor("middle"));
  doc.Text(18, plot_y0 + plot_h / 2, y_.label, TextStyle::Sized(13).Anchor("middle").Rotate(-90));

  doc.ClipRect("plot-area", plot_x0, plot_y0, plot_w, plot_h);
  doc.BeginGroup({}, "plot-area");
  for (const Band& b : bands_) {
    doc.BeginGroup(b.label);
    if (b.orientation == Orientation::kHorizontal) {
      double y1 = sy(std::max(b.from, b.to)), y2 = sy(std::min(b.from, b.to));
      doc.Rect(plot_x0, y1, plot_w, y2 - y1, Style::Fill(b.color).WithOpacity(b.opacity));
    } else {
      double x1 = sx(std::min(b.from, b.to)), x2 = sx(std::max(b.from, b.to));
      doc.Rect(x1, plot_y0, x2 - x1, plot_h, Style::Fill(b.color).WithOpacity(b.opacity));
    }
    doc.EndGroup();
  }
  for (const Series& s : series_) {
    doc.BeginGroup(s.name);
    if (s.kind == SeriesKind::kScatter) {
      for (size_t i = 0; i < s.points.size(); ++i) {
        double x = sx(s.points[i].x), y = sy(s.points[i].y);
        doc.Circle(x, y, s.width < 2 ? 3.5 : s.width, Style::Fill(s.color).WithStroke("white", 0.8));
        if (i < s.point_labels.size() && !s.point_labels[i].empty()) {
          doc.Text(x + 6, y - 6, s.point_labels[i], TextStyle::Sized(10).Color(s.color));
        }
      }
    } else {
      std::vector<Point> points = s.kind == SeriesKind::kStep ? StepCorners(s.points) : s.points;
      std::vector<std::pair<double, double>> pixels;
      pixels.reserve(points.size());
      for (const Point& p : points) pixels.emplace_back(sx(p.x), sy(p.y));
      doc.Polyline(Thin(pixels, plot_w), Style::Stroke(s.color, s.width).WithDash(s.dash));
      if (s.markers) {
        for (const Point& p : s.points) doc.Circle(sx(p.x), sy(p.y), 3, Style::Fill(s.color));
      }
    }
    doc.EndGroup();
  }
  doc.EndGroup();

  // Reference lines and their labels (labels are not clipped), over the data with a white halo
  // so that a threshold's label reads where the data runs near it.
  for (const ReferenceLine& l : lines_) {
    const Style style = Style::Stroke(l.color, 1.2).WithDash(l.dash);
    if (l.orientation == Orientation::kHorizontal) {
      double y = sy(l.value);
      if (y < plot_y0 - 0.5 || y > plot_y0 + plot_h + 0.5) continue;
      doc.Line(plot_x0, y, plot_x0 + plot_w, y, style);
      if (!l.label.empty()) {
        doc.Text(plot_x0 + plot_w - 4, y - 4, l.label, TextStyle::Sized(10).Anchor("end").Color(l.color).Halo());
      }
    } else {
      double x = sx(l.value);
      if (x < plot_x0 - 0.5 || x > plot_x0 + plot_w + 0.5) continue;
      doc.Line(x, plot_y0, x, plot_y0 + plot_h, style);
      if (!l.label.empty()) {
        doc.Text(x + 4, plot_y0 + 12, l.label, TextStyle::Sized(10).Color(l.color).Halo());
      }
    }
  }
  for (const Band& b : bands_) {
    if (b.label.empty()) continue;
    if (b.orientation == Orientation::kHorizontal) {
      doc.Text(plot_x0 + 4, sy(std::max(b.from, b.to)) + 12, b.label, TextStyle::Sized(10).Color("#555555").Halo());
    } else {
      doc.Text(sx(std::min(b.from, b.to)) + 3, plot_y0 + plot_h - 4, b.label,
               TextStyle::Sized(10).Color("#555555").Halo());
    }
  }
  doc.Rect(plot_x0, plot_y0, plot_w, plot_h, Style::Stroke("#888888", 1));

  // Legend, right of the plot.
  double ly = plot_y0 + 8;
  const double lx = plot_x0 + plot_w + 16;
  for (const Series& s : series_) {
    if (s.name.empty()) continue;
    if (s.kind == SeriesKind::kScatter) {
      doc.Circle(lx + 12, ly, 4, Style::Fill(s.color));
    } else {
      doc.Line(lx, ly, lx + 24, ly, Style::Stroke(s.color, std::max(2.0, s.width)).WithDash(s.dash));
    }
    doc.Text(lx + 32, ly, s.name, TextStyle::Sized(12).Baseline("middle"));
    ly += 20;
  }
  return doc;
}

}  // namespace wattcut::plot
