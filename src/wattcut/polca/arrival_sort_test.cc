#include "wattcut/polca/arrival_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

// Blocks of every shape the sources make (spread over an hour, bunched at a few instants, equal
// times with different tokens, a single time, tiny): the order is std::sort's.
// The last trials are blocks of over 2 MiB, which live in huge pages (ArrivalBlock).
TEST(SortArrivals, GivesTheOrderOfStdSort) {
  ArrivalBlock scratch;
  for (uint64_t trial = 0; trial < 63; ++trial) {
    SplitMix64 rng(trial, 7);
    const size_t n = trial < 10 ? trial * 9 : (trial < 60 ? 1000 : 100000) + static_cast<size_t>(rng.Uniform() * 20000);
    ArrivalBlock arrivals;
    for (size_t i = 0; i < n; ++i) {
      double t = 3600 * (trial + rng.Uniform());
      if (trial % 3 == 1) t = 3600.0 * trial + std::floor(rng.Uniform() * 5);  // bunched at 5 instants
      if (trial % 5 == 2) t = 42;                                              // one instant
      arrivals.push_back({t, static_cast<int32_t>(rng.Uniform() * 50), static_cast<int32_t>(rng.Uniform() * 3),
                          rng.Uniform() < 0.5 ? Priority::kLow : Priority::kHigh});
    }
    std::vector<Arrival> want(arrivals.begin(), arrivals.end());
    std::sort(want.begin(), want.end(), ArrivesBefore);
    SortArrivals(arrivals, scratch);
    ASSERT_EQ(arrivals.size(), want.size());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_FALSE(ArrivesBefore(arrivals[i], want[i]) || ArrivesBefore(want[i], arrivals[i]))
          << "trial " << trial << " at " << i;
    }
  }
}

}  // namespace
}  // namespace wattcut::polca
