#include "wattcut/plot/color.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace wattcut::plot {
namespace {

struct Rgb {
  double r, g, b;
};

// Five anchor colours sampled from the viridis ramp.
constexpr std::array<Rgb, 5> kRamp = {{
    {68, 1, 84},
    {59, 82, 139},
    {33, 145, 140},
    {94, 201, 98},
    {253, 231, 37},
}};

std::string Hex(const Rgb& c) {
  char buffer[8];
  auto channel = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", channel(c.r), channel(c.g), channel(c.b));
  return buffer;
}

Rgb RampAt(double t) {
  t = std::clamp(t, 0.0, 1.0);
  double scaled = t * static_cast<double>(kRamp.size() - 1);
  size_t i = std::min(static_cast<size_t>(scaled), kRamp.size() - 2);
  double f = scaled - static_cast<double>(i);
  const Rgb& a = kRamp[i];
  const Rgb& b = kRamp[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

}  // namespace

std::string PaletteColor(size_t index) {
  static const std::array<const char*, 10> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                       "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[index % kPalette.size()];
}

ColorRamp::ColorRamp(double min, double max) : min_(std::min(min, max)), max_(std::max(min, max)) {}

std::string ColorRamp::ColorOf(double value) const {
  if (!(max_ > min_)) return Hex(RampAt(0.5));
  return Hex(RampAt((value - min_) / (max_ - min_)));
}

std::vector<std::pair<double, std::string>> ColorRamp::GradientStops() const {
  std::vector<std::pair<double, std::string>> stops;
  for (size_t i = 0; i < kRamp.size(); ++i) {
    stops.emplace_back(static_cast<double>(i) / static_cast<double>(kRamp.size() - 1), Hex(kRamp[i]));
  }
  return stops;
}

}  // namespace wattcut::plot
