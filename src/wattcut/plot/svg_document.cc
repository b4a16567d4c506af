#include "wattcut/plot/svg_document.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

namespace wattcut::plot {

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out.push_back(c);
    }
  }
  return out;
}

std::string FormatCoordinate(double value) {
  if (!std::isfinite(value)) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string s = buffer;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

Style Style::Fill(std::string color) { return Style().WithFill(std::move(color)); }
Style Style::Stroke(std::string color, double width) { return Style().WithStroke(std::move(color), width); }
Style Style::WithFill(std::string color) const {
  Style s = *this;
  s.fill = std::move(color);
  return s;
}
Style Style::WithStroke(std::string color, double width) const {
  Style s = *this;
  s.stroke = std::move(color);
  s.stroke_width = width;
  return s;
}
Style Style::WithOpacity(double value) const {
  Style s = *this;
  s.opacity = value;
  return s;
}
Style Style::WithDash(std::string pattern) const {
  Style s = *this;
  s.dash = std::move(pattern);
  return s;
}

TextStyle TextStyle::Sized(double px) {
  TextStyle t;
  t.size = px;
  return t;
}
TextStyle TextStyle::Anchor(std::string value) const {
  TextStyle t = *this;
  t.anchor = std::move(value);
  return t;
}
TextStyle TextStyle::Color(std::string value) const {
  TextStyle t = *this;
  t.fill = std::move(value);
  return t;
}
TextStyle TextStyle::Bold() const {
  TextStyle t = *this;
  t.bold = true;
  return t;
}
TextStyle TextStyle::Rotate(double degrees) const {
  TextStyle t = *this;
  t.rotate_deg = degrees;
  return t;
}
TextStyle TextStyle::Baseline(std::string value) const {
  TextStyle t = *this;
  t.baseline = std::move(value);
  return t;
}

TextStyle TextStyle::Halo() const {
  TextStyle t = *this;
  t.halo = true;
  return t;
}

SvgDocument::SvgDocument(double width, double height) : width_(width), height_(height) {}

void SvgDocument::AppendStyle(const Style& style) {
  body_ += " fill=\"" + EscapeXml(style.fill) + "\"";
  if (style.stroke != "none") {
    body_ +=
        " stroke=\"" + EscapeXml(style.stroke) + "\" stroke-width=\"" + FormatCoordinate(style.stroke_width) + "\"";
    if (!style.dash.empty()) body_ += " stroke-dasharray=\"" + EscapeXml(style.dash) + "\"";
  }
  if (style.opacity < 1.0) body_ += " opacity=\"" + FormatCoordinate(style.opacity) + "\"";
}

void SvgDocument::AppendPoints(const std::vector<std::pair<double, double>>& points) {
  body_ += " points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    if (i > 0) body_ += ' ';
    body_ += FormatCoordinate(points[i].first);
    body_ += ',';
    body_ += FormatCoordinate(points[i].second);
  }
  body_ += "\"";
}

void SvgDocument::Rect(double x, double y, double w, double h, const Style& style) {
  body_ += "<rect x=\"" + FormatCoordinate(x) + "\" y=\"" + FormatCoordinate(y) + "\" width=\"" +
           FormatCoordinate(std::max(0.0, w)) + "\" height=\"" + FormatCoordinate(std::max(0.0, h)) + "\"";
  AppendStyle(style);
  body_ += "/>\n";
}

void SvgDocument::Line(double x1, double y1, double x2, double y2, const Style& style) {
  body_ += "<line x1=\"" + FormatCoordinate(x1) + "\" y1=\"" + FormatCoordinate(y1) + "\" x2=\"" +
           FormatCoordinate(x2) + "\" y2=\"" + FormatCoordinate(y2) + "\"";
  AppendStyle(style);
  body_ += "/>\n";
}

void SvgDocument::Polyline(const std::vector<std::pair<double, double>>& points, const Style& style) {
  if (points.empty()) return;
  body_ += "<polyline";
  AppendPoints(points);
  AppendStyle(style);
  body_ += " stroke-linejoin=\"round\"/>\n";
}

void SvgDocument::Polygon(const std::vector<std::pair<double, double>>& points, const Style& style) {
  if (points.empty()) return;
  body_ += "<polygon";
  AppendPoints(points);
  AppendStyle(style);
  body_ += "/>\n";
}

void SvgDocument::Circle(double cx, double cy, double r, const Style& style) {
  body_ += "<circle cx=\"" + FormatCoordinate(cx) + "\" cy=\"" + FormatCoordinate(cy) + "\" r=\"" +
           FormatCoordinate(r) + "\"";
  AppendStyle(style);
  body_ += "/>\n";
}

void SvgDocument::Text(double x, double y, std::string_view text, const TextStyle& style) {
  body_ += "<text x=\"" + FormatCoordinate(x) + "\" y=\"" + FormatCoordinate(y) +
           "\" font-family=\"sans-serif\" font-size=\"" + FormatCoordinate(style.size) + "\" fill=\"" +
           EscapeXml(style.fill) + "\" text-anchor=\"" + EscapeXml(style.anchor) + "\"";
  if (style.bold) body_ += " font-weight=\"bold\"";
  if (style.halo) body_ += " stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";
  if (!style.baseline.empty()) {
    body_ += " dominant-baseline=\"" + EscapeXml(style.baseline) + "\"";
  }
  if (style.rotate_deg != 0.0) {
    body_ += " transform=\"rotate(" + FormatCoordinate(style.rotate_deg) + " " + FormatCoordinate(x) + " " +
             FormatCoordinate(y) + ")\"";
  }
  body_ += ">" + EscapeXml(text) + "</text>\n";
}

void SvgDocument::LinearGradient(std::string_view id, const std::vector<std::pair<double, std::string>>& stops) {
  defs_ += "<linearGradient id=\"" + EscapeXml(id) + "\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">\n";
  for (const auto& [offset, colour] : stops) {
    defs_ += "<stop offset=\"" + FormatCoordinate(offset) + "\" stop-color=\"" + EscapeXml(colour) + "\"/>\n";
  }
  defs_ += "</linearGradient>\n";
}

void SvgDocument::ClipRect(std::string_view id, double x, double y, double w, double h) {
  defs_ += "<clipPath id=\"" + EscapeXml(id) + "\"><rect x=\"" + FormatCoordinate(x) + "\" y=\"" + FormatCoordinate(y) +
           "\" width=\"" + FormatCoordinate(w) + "\" height=\"" + FormatCoordinate(h) + "\"/></clipPath>\n";
}

void SvgDocument::BeginGroup(std::string_view tooltip, std::string_view clip_id) {
  body_ += "<g";
  if (!clip_id.empty()) body_ += " clip-path=\"url(#" + EscapeXml(clip_id) + ")\"";
  body_ += ">";
  if (!tooltip.empty()) body_ += "<title>" + EscapeXml(tooltip) + "</title>";
  body_ += "\n";
  ++open_groups_;
}

void SvgDocument::EndGroup() {
  if (open_groups_ == 0) return;
  body_ += "</g>\n";
  --open_groups_;
}

std::string SvgDocument::ToString() const {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
      FormatCoordinate(width_) + "\" height=\"" + FormatCoordinate(height_) + "\" viewBox=\"0 0 " +
      FormatCoordinate(width_) + " " + FormatCoordinate(height_) + "\">\n";
  if (!defs_.empty()) out += "<defs>\n" + defs_ + "</defs>\n";
  out += body_;
  for (int i = 0; i < open_groups_; ++i) out += "</g>\n";
  out += "</svg>\n";
  return out;
}

Status SvgDocument::WriteFile(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot open file for writing"};
  out << ToString();
  out.close();
  if (!out) return Error{path + ": write error"};
  return Status::Ok();
}

}  // namespace wattcut::plot
