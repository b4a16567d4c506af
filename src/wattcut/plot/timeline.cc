#include "wattcut/plot/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "wattcut/plot/axis.h"
#include "wattcut/plot/color.h"

namespace wattcut::plot {
namespace {

constexpr double kLaneHeight = 26;
constexpr double kLaneGap = 6;
constexpr double kTop = 40;
constexpr double kRight = 24;
constexpr double kAxisHeight = 44;
constexpr double kLegendHeight = 56;
constexpr double kCharWidth = 6.2;  // approximate width of an 11 px sans-serif glyph

}  // namespace

Timeline::Timeline(std::string title, std::string time_label)
    : title_(std::move(title)), time_label_(std::move(time_label)) {}

void Timeline::set_width(double width) { width_ = std::max(width, 300.0); }

int Timeline::AddLane(std::string name) {
  lanes_.push_back(std::move(name));
  return static_cast<int>(lanes_.size()) - 1;
}

void Timeline::AddBox(TimelineBox box) { boxes_.push_back(std::move(box)); }

void Timeline::SetColorScale(std::string label, double min, double max) { scale_ = Scale{std::move(label), min, max}; }

void Timeline::AddLegendEntry(std::string name, std::string color) {
  legend_.push_back({std::move(name), std::move(color)});
}

SvgDocument Timeline::Render() const {
  size_t longest = 0;
  for (const std::string& lane : lanes_) longest = std::max(longest, lane.size());
  const double left = std::clamp(16 + kCharWidth * static_cast<double>(longest), 60.0, 260.0);
  const double plot_w = width_ - left - kRight;
  const double lanes_h = static_cast<double>(lanes_.size()) * (kLaneHeight + kLaneGap);
  const bool has_legend = scale_.has_value() || !legend_.empty();
  const double height = kTop + lanes_h + kAxisHeight + (has_legend ? kLegendHeight : 0) + 8;

  double t0 = std::numeric_limits<double>::infinity();
  double t1 = -std::numeric_limits<double>::infinity();
  for (const TimelineBox& b : boxes_) {
    if (b.lane < 0 || b.lane >= static_cast<int>(lanes_.size())) continue;
    t0 = std::min({t0, b.start, b.end});
    t1 = std::max({t1, b.start, b.end});
  }
  if (!(t0 <= t1)) t0 = 0, t1 = 1;
  Ticks ticks = NiceTicks(t0, t1, std::max(2, static_cast<int>(plot_w / 90)));
  LinearScale sx(ticks.lo, ticks.hi, left, left + plot_w);
  std::optional<ColorRamp> ramp;
  if (scale_) ramp.emplace(scale_->min, scale_->max);

  SvgDocument doc(width_, height);
  doc.Rect(0, 0, width_, height, Style::Fill("white"));
  doc.Text(width_ / 2, 24, title_, TextStyle::Sized(16).Anchor("middle").Bold());

  const double axis_y = kTop + lanes_h;
  for (double v : ticks.values) {
    double x = sx(v);
    doc.Line(x, kTop - 4, x, axis_y, Style::Stroke("#e6e6e6"));
    doc.Text(x, axis_y + 14, FormatTick(v, ticks.step), TextStyle::Sized(11).Anchor("middle").Color("#444444"));
  }
  doc.Text(left + plot_w / 2, axis_y + 34, time_label_, TextStyle::Sized(13).Anchor("middle"));

  for (size_t i = 0; i < lanes_.size(); ++i) {
    double y = kTop + static_cast<double>(i) * (kLaneHeight + kLaneGap);
    doc.Text(left - 8, y + kLaneHeight / 2, lanes_[i], TextStyle::Sized(12).Anchor("end").Baseline("middle"));
    doc.Rect(left, y, plot_w, kLaneHeight, Style::Fill("#f7f7f7"));
  }

  for (const TimelineBox& b : boxes_) {
    if (b.lane < 0 || b.lane >= static_cast<int>(lanes_.size())) continue;
    double y = kTop + static_cast<double>(b.lane) * (kLaneHeight + kLaneGap);
    double x1 = sx(std::min(b.start, b.end));
    double x2 = sx(std::max(b.start, b.end));
    std::string color = !b.color.empty() ? b.color : ramp ? ramp->ColorOf(b.value) : "#9e9e9e";
    std::string tooltip = b.label.empty() ? "" : b.label + ": ";
    tooltip += FormatTick(b.start, ticks.step / 100) + " - " + FormatTick(b.end, ticks.step / 100);
    if (ramp && b.color.empty()) tooltip += " (" + FormatTick(b.value, 1) + ")";
    doc.BeginGroup(tooltip);
    doc.Rect(x1, y, std::max(x2 - x1, 0.5), kLaneHeight, Style::Fill(color).WithStroke("white", 0.5));
    if (!b.label.empty() && kCharWidth * static_cast<double>(b.label.size()) + 4 < x2 - x1) {
      // Light text on the dark end of the ramp, dark text on the light end.
      bool dark = ramp && b.color.empty() && ramp->max() > ramp->min() &&
                  (b.value - ramp->min()) / (ramp->max() - ramp->min()) < 0.55;
      doc.Text((x1 + x2) / 2, y + kLaneHeight / 2, b.label,
               TextStyle::Sized(11).Anchor("middle").Color(dark ? "white" : "#111111").Baseline("middle"));
    }
    doc.EndGroup();
  }

  double ly = axis_y + kAxisHeight + 8;
  double lx = left;
  if (scale_) {
    doc.LinearGradient("color-scale", ramp->GradientStops());
    const double bar_w = 220;
    doc.Text(lx, ly + 9, scale_->label, TextStyle::Sized(12).Baseline("middle"));
    double bar_x = lx + kCharWidth * 2 * static_cast<double>(scale_->label.size()) / 1.8 + 12;
    doc.Rect(bar_x, ly, bar_w, 14, Style::Fill("url(#color-scale)").WithStroke("#888888", 0.5));
    Ticks scale_ticks = NiceTicks(scale_->min, scale_->max, 6);
    LinearScale sv(scale_->min, scale_->max, bar_x, bar_x + bar_w);
    for (double v : scale_ticks.values) {
      if (v < std::min(scale_->min, scale_->max) - 1e-9 || v > std::max(scale_->min, scale_->max) + 1e-9) continue;
      double x = sv(v);
      doc.Line(x, ly + 14, x, ly + 18, Style::Stroke("#444444"));
      doc.Text(x, ly + 30, FormatTick(v, scale_ticks.step), TextStyle::Sized(10).Anchor("middle").Color("#444444"));
    }
    lx = bar_x + bar_w + 40;
  }
  for (const LegendEntry& e : legend_) {
    doc.Rect(lx, ly, 14, 14, Style::Fill(e.color));
    doc.Text(lx + 20, ly + 7, e.name, TextStyle::Sized(12).Baseline("middle"));
    lx += 34 + kCharWidth * static_cast<double>(e.name.size());
    if (lx > width_ - 120) {
      lx = left;
      ly += 22;
    }
  }
  return doc;
}

}  // namespace wattcut::plot
