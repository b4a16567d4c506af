// A standalone SVG document built element by element. Text is XML-escaped on the way
// in, numbers are written compactly, and the result opens in any browser.
//
//   SvgDocument doc(640, 480);
//   doc.Rect(0, 0, 640, 480, {.fill = "white"});
//   doc.Text(20, 30, "power < 100 %", {.size = 14});
//   Status s = doc.WriteFile("out.svg");
//
// Coordinates are SVG user units (pixels), origin top-left, y growing downwards.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::plot {

// Replaces & < > " ' by their XML entities and drops control characters that XML 1.0
// forbids (everything below 0x20 except tab, newline and carriage return).
std::string EscapeXml(std::string_view text);

// A number as an SVG attribute value: at most two decimals, no trailing zeros, no "-0".
std::string FormatCoordinate(double value);

struct Style {
  std::string fill = "none";  // an SVG colour ("#1f77b4", "white", "none")
  std::string stroke = "none";
  double stroke_width = 1.0;
  double opacity = 1.0;  // applies to fill and stroke
  std::string dash;      // stroke-dasharray, e.g. "4 3"; empty for solid

  // Builders, e.g. Style::Stroke("#888888", 2).WithDash("4 2"). (Designated
  // initializers also work but trip GCC 12's -Wmissing-field-initializers.)
  static Style Fill(std::string color);
  static Style Stroke(std::string color, double width = 1.0);
  Style WithFill(std::string color) const;
  Style WithStroke(std::string color, double width = 1.0) const;
  Style WithOpacity(double value) const;
  Style WithDash(std::string pattern) const;
};

struct TextStyle {
  double size = 12.0;            // font size in px
  std::string anchor = "start";  // start | middle | end
  std::string fill = "#222222";
  bool bold = false;
  double rotate_deg = 0.0;  // rotation about the anchor point
  std::string baseline;     // dominant-baseline, e.g. "middle"; empty for default
  bool halo = false;        // a white outline under the glyphs, so that a label reads over data

  // Builders, e.g. TextStyle::Sized(11).Anchor("middle").Color("#444444").
  static TextStyle Sized(double px);
  TextStyle Anchor(std::string value) const;
  TextStyle Color(std::string value) const;
  TextStyle Bold() const;
  TextStyle Rotate(double degrees) const;
  TextStyle Baseline(std::string value) const;
  TextStyle Halo() const;
};

class SvgDocument {
 public:
  SvgDocument(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  void Rect(double x, double y, double w, double h, const Style& style);
  void Line(double x1, double y1, double x2, double y2, const Style& style);
  void Polyline(const std::vector<std::pair<double, double>>& points, const Style& style);
  void Polygon(const std::vector<std::pair<double, double>>& points, const Style& style);
  void Circle(double cx, double cy, double r, const Style& style);
  void Text(double x, double y, std::string_view text, const TextStyle& style);

  // A horizontal linear gradient usable as fill="url(#id)"; stops are (offset 0..1, colour).
  void LinearGradient(std::string_view id, const std::vector<std::pair<double, std::string>>& stops);

  // A rectangular clip region usable by BeginGroup.
  void ClipRect(std::string_view id, double x, double y, double w, double h);

  // Groups nest; `tooltip` (may be empty) becomes the group's <title>, which browsers
  // show on hover; `clip_id` (may be empty) names a ClipRect that clips the group.
  // Every BeginGroup needs its EndGroup before ToString.
  void BeginGroup(std::string_view tooltip = {}, std::string_view clip_id = {});
  void EndGroup();

  // The complete document. Groups left open are closed.
  std::string ToString() const;
  // Writes ToString() to `path`; the error names the path.
  Status WriteFile(const std::string& path) const;

 private:
  void AppendStyle(const Style& style);
  void AppendPoints(const std::vector<std::pair<double, double>>& points);

  double width_;
  double height_;
  std::string defs_;
  std::string body_;
  int open_groups_ = 0;
};

}  // namespace wattcut::plot
