// A timeline: named lanes (one per pipeline stage, GPU, server, ...) of boxes over
// time, each box coloured either by a value on a continuous colour scale (with a
// scale bar legend) or by an explicit colour (with optional categorical legend).
//
//   Timeline t("1F1B schedule", "time (ms)");
//   int stage0 = t.AddLane("stage 0");
//   t.SetColorScale("SM frequency (MHz)", 1005, 1410);
//   t.AddBox({stage0, 0.0, 12.5, 1410, "F1"});
//   Status s = t.WriteSvg("timeline.svg");
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plot/svg_document.h"

namespace wattcut::plot {

struct TimelineBox {
  TimelineBox() = default;
  TimelineBox(int lane_, double start_, double end_, double value_, std::string label_ = {})
      : lane(lane_), start(start_), end(end_), value(value_), label(std::move(label_)) {}

  int lane = 0;        // index returned by AddLane
  double start = 0.0;  // in the time unit of the axis
  double end = 0.0;
  double value = 0.0;  // coloured through the scale when `color` is empty
  std::string label;   // drawn inside the box when it fits; always in the tooltip
  std::string color;   // explicit colour; overrides the scale
};

class Timeline {
 public:
  Timeline(std::string title, std::string time_label);

  void set_width(double width);
  // Returns the lane's index; lanes are drawn top to bottom in the order added.
  int AddLane(std::string name);
  // Boxes on a lane that does not exist are ignored by Render.
  void AddBox(TimelineBox box);
  // Colours boxes by value over [min, max] and shows a labelled scale bar. Without a
  // scale, boxes without an explicit colour are grey.
  void SetColorScale(std::string label, double min, double max);
  // A categorical legend entry (for boxes with explicit colours).
  void AddLegendEntry(std::string name, std::string color);

  size_t lane_count() const { return lanes_.size(); }

  SvgDocument Render() const;
  std::string ToSvg() const { return Render().ToString(); }
  Status WriteSvg(const std::string& path) const { return Render().WriteFile(path); }

 private:
  struct Scale {
    std::string label;
    double min;
    double max;
  };
  struct LegendEntry {
    std::string name;
    std::string color;
  };

  std::string title_;
  std::string time_label_;
  double width_ = 1000;
  std::vector<std::string> lanes_;
  std::vector<TimelineBox> boxes_;
  std::optional<Scale> scale_;
  std::vector<LegendEntry> legend_;
};

}  // namespace wattcut::plot
