#include "wattcut/plot/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace wattcut::plot {

Ticks NiceTicks(double min, double max, int target_count) {
  Ticks ticks;
  if (!std::isfinite(min) || !std::isfinite(max)) {
    ticks.values = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};
    return ticks;
  }
  if (min > max) std::swap(min, max);
  if (min == max) {
    double pad = min == 0.0 ? 1.0 : std::fabs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  target_count = std::max(2, target_count);
  double raw_step = (max - min) / target_count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = magnitude * 10.0;
  // The smallest nice step that gives no more than about target_count intervals.
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * magnitude >= raw_step * (1.0 - 1e-9)) {
      step = m * magnitude;
      break;
    }
  }
  // Snap to whole steps, tolerating floating-point noise in the data bounds.
  double lo_index = std::floor(min / step + 1e-9);
  double hi_index = std::ceil(max / step - 1e-9);
  ticks.step = step;
  ticks.lo = lo_index * step;
  ticks.hi = hi_index * step;
  for (double i = lo_index; i <= hi_index + 0.5; i += 1.0) {
    double v = i * step;
    if (std::fabs(v) < step * 1e-9) v = 0.0;
    ticks.values.push_back(v);
  }
  return ticks;
}

std::string FormatTick(double value, double step) {
  char buffer[64];
  double a = std::fabs(value);
  if (a >= 1e7 || (a > 0 && a < 1e-4)) {
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
  }
  int decimals = 0;
  if (step > 0) {
    // Enough decimals that value/step differences show: 0.25 -> 2, 0.5 -> 1, 20 -> 0.
    for (decimals = 0; decimals < 8; ++decimals) {
      double scaled = step * std::pow(10.0, decimals);
      if (std::fabs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) break;
    }
  }
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string s = buffer;
  if (s.rfind("-0", 0) == 0 && std::strtod(s.c_str(), nullptr) == 0.0) s = s.substr(1);
  return s;
}

LinearScale::LinearScale(double domain_lo, double domain_hi, double range_lo, double range_hi)
    : domain_lo_(domain_lo),
      domain_span_(domain_hi - domain_lo),
      range_lo_(range_lo),
      range_span_(range_hi - range_lo) {}

double LinearScale::operator()(double value) const {
  if (domain_span_ == 0.0) return range_lo_ + range_span_ / 2.0;
  return range_lo_ + (value - domain_lo_) / domain_span_ * range_span_;
}

}  // namespace wattcut::plot
