// Linear axes: "nice" tick choice (steps of 1, 2, 2.5 or 5 times a power of ten), tick
// labels, and the mapping from data values to pixels.
#pragma once

#include <string>
#include <vector>

namespace wattcut::plot {

struct Ticks {
  double lo = 0.0;  // axis start, a multiple of step, <= the data minimum
  double hi = 1.0;  // axis end, a multiple of step, >= the data maximum
  double step = 0.2;
  std::vector<double> values;  // lo, lo + step, ..., hi
};

// Ticks covering [min, max] with about `target_count` intervals (at least 2). A
// degenerate range (min == max) is widened around the value; non-finite input gives
// the default [0, 1]. The axis ends are rounded outwards to whole steps.
Ticks NiceTicks(double min, double max, int target_count = 6);

// A tick label with just enough decimals for `step` ("0.25", "1.5", "40", "1e+07").
std::string FormatTick(double value, double step);

// Maps [domain_lo, domain_hi] onto [range_lo, range_hi] (range may run backwards, as
// for a y axis whose pixels grow downwards).
class LinearScale {
 public:
  LinearScale(double domain_lo, double domain_hi, double range_lo, double range_hi);
  double operator()(double value) const;

 private:
  double domain_lo_;
  double domain_span_;
  double range_lo_;
  double range_span_;
};

}  // namespace wattcut::plot
