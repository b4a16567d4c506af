// The one rule by which the agent's two callers compose on a GPU's SM clock (docs/agent.md): the
// training side's lock [lo, hi] and the row side's ceiling c reach NVML as
//   neither        -> reset
//   lock only      -> [lo, hi]
//   ceiling only   -> [lowest supported, c]
//   both           -> [min(lo, c), min(hi, c)]
// so a ceiling always wins and lifting it brings the training lock back.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace wattcut::agent {

struct ClockRange {
  int min_mhz = 0;
  int max_mhz = 0;
  bool operator==(const ClockRange&) const = default;
};

// What NVML should be told: nullopt = reset the SM clocks.
std::optional<ClockRange> ComposeSmClocks(const std::optional<ClockRange>& training_lock,
                                          const std::optional<int>& ceiling_mhz, int lowest_supported_mhz);

// The highest supported clock at or below `mhz` (`supported` highest first); nullopt when every
// supported clock is above it.
std::optional<int> SupportedClockAtOrBelow(const std::vector<int>& supported_mhz, int mhz);

// "1200-1200 MHz", "reset".
std::string AppliedClocksText(const std::optional<ClockRange>& range);

}  // namespace wattcut::agent
