// A hardware energy counter widened past its wraparound: RAPL's `energy_uj` runs from 0 to
// `max_energy_range_uj` and starts again at 0 (at 500 W a typical 262 kJ range fills in under
// 9 minutes). Fed every raw reading in order, it gives a count that never goes down: the first
// reading as it is, then each step's increase, a step whose reading went down counted as having
// wrapped once (range - previous + now). Two wraps between readings cannot be told from one, so
// the caller reads more often than the range fills.
#pragma once

#include <cstdint>

namespace wattcut::cpu {

class WrappingCounter {
 public:
  explicit WrappingCounter(int64_t range) : range_(range) {}

  // The widened count at this reading (`raw` in [0, range]).
  int64_t Widen(int64_t raw);
  int64_t wraps() const { return wraps_; }

 private:
  int64_t range_;
  bool started_ = false;
  int64_t last_raw_ = 0;
  int64_t total_ = 0;
  int64_t wraps_ = 0;
};

}  // namespace wattcut::cpu
