#include "wattcut/polca/arrival_sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace wattcut::polca {

void SortArrivals(ArrivalBlock& arrivals, ArrivalBlock& scratch) {
  const size_t n = arrivals.size();
  if (n < 64) {
    std::sort(arrivals.begin(), arrivals.end(), ArrivesBefore);
    return;
  }
  double lo = arrivals[0].time_s, hi = arrivals[0].time_s;
  for (const Arrival& a : arrivals) {
    lo = std::min(lo, a.time_s);
    hi = std::max(hi, a.time_s);
  }
  // About four arrivals per bucket; a non-finite span (not made by any source) falls back.
  const size_t buckets = n / 4;
  const double per_s = static_cast<double>(buckets) / (hi - lo);
  if (!(hi > lo) || !std::isfinite(per_s)) {
    std::sort(arrivals.begin(), arrivals.end(), ArrivesBefore);
    return;
  }
  auto bucket = [&](double t) {
    const double b = (t - lo) * per_s;
    return std::min(buckets - 1, static_cast<size_t>(b));
  };
  // Bucket boundaries are monotone in time, so every arrival of a bucket comes before every one
  // of a later bucket.
  std::vector<uint32_t> start(buckets + 1, 0);
  for (const Arrival& a : arrivals) ++start[bucket(a.time_s) + 1];
  for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  scratch.resize(n);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (const Arrival& a : arrivals) scratch[fill[bucket(a.time_s)]++] = a;
  for (size_t b = 0; b < buckets; ++b) {
    auto first = scratch.begin() + start[b], last = scratch.begin() + start[b + 1];
    if (last - first > 32) {  // arrivals bunched at one time (a trace's copies, equal timestamps)
      std::sort(first, last, ArrivesBefore);
      continue;
    }
    // Insertion sort: buckets are small.
    for (auto it = first + (first != last ? 1 : 0); it < last; ++it) {
      const Arrival a = *it;
      auto hole = it;
      while (hole != first && ArrivesBefore(a, *(hole - 1))) {
        *hole = *(hole - 1);
        --hole;
      }
      *hole = a;
    }
  }
  arrivals.swap(scratch);
}

}  // namespace wattcut::polca
