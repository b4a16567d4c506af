#include "wattcut/agent/clock_composition.h"

#include <algorithm>

namespace wattcut::agent {

std::optional<ClockRange> ComposeSmClocks(const std::optional<ClockRange>& training_lock,
                                          const std::optional<int>& ceiling_mhz, int lowest_supported_mhz) {
  if (!ceiling_mhz) return training_lock;
  const int c = *ceiling_mhz;
  if (!training_lock) return ClockRange{std::min(lowest_supported_mhz, c), c};
  return ClockRange{std::min(training_lock->min_mhz, c), std::min(training_lock->max_mhz, c)};
}

std::optional<int> SupportedClockAtOrBelow(const std::vector<int>& supported_mhz, int mhz) {
  std::optional<int> best;
  for (int f : supported_mhz) {
    if (f <= mhz && (!best || f > *best)) best = f;
  }
  return best;
}

std::string AppliedClocksText(const std::optional<ClockRange>& range) {
  if (!range) return "reset";
  return std::to_string(range->min_mhz) + "-" + std::to_string(range->max_mhz) + " MHz";
}

}  // namespace wattcut::agent
