// Colours for charts: a categorical palette for series and a continuous ramp that maps
// a value to a colour (for timelines coloured by frequency, power, ...).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace wattcut::plot {

// The i-th colour of a 10-colour categorical palette (wraps around), as "#rrggbb".
std::string PaletteColor(size_t index);

// Maps [min, max] linearly onto a perceptually ordered ramp (dark blue -> green ->
// yellow, like viridis). Values outside are clamped; min == max maps everything to the
// middle of the ramp.
class ColorRamp {
 public:
  ColorRamp(double min, double max);

  double min() const { return min_; }
  double max() const { return max_; }
  std::string ColorOf(double value) const;
  // Gradient stops (offset 0..1, colour) for SvgDocument::LinearGradient.
  std::vector<std::pair<double, std::string>> GradientStops() const;

 private:
  double min_;
  double max_;
};

}  // namespace wattcut::plot
