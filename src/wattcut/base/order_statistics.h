// Order statistics of a sample, found with std::nth_element: `values` is reordered, not sorted,
// and nothing is copied (a week of 1 s readings is millions of values). Both are 0 for an empty
// sample.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace wattcut {

// The nearest-rank percentile: the smallest value with at least q (in [0, 1]) of the sample at or
// below it.
template <typename T, typename Allocator>
double NearestRankPercentile(std::vector<T, Allocator>& values, double q) {
  if (values.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  const size_t k = std::min(values.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return static_cast<double>(values[k]);
}

// The element at index n / 2 of the sorted sample (the upper median for an even count).
template <typename T>
double UpperMedian(std::vector<T>& values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return static_cast<double>(values[values.size() / 2]);
}

// The upper median of the time between consecutive samples (anything with a `time_s`).
template <typename Sample>
double MedianTimeStep(const std::vector<Sample>& samples) {
  std::vector<double> steps;
  steps.reserve(samples.empty() ? 0 : samples.size() - 1);
  for (size_t i = 1; i < samples.size(); ++i) steps.push_back(samples[i].time_s - samples[i - 1].time_s);
  return UpperMedian(steps);
}

}  // namespace wattcut
