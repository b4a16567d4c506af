#include "wattcut/profile/profile.h"

#include <algorithm>
#include <stdexcept>

namespace wattcut {

int Profile::max_freq_mhz() const {
  int best = 0;
  for (const auto& stage : stages_) {
    for (const auto& list : stage) {
      for (const Measurement& m : list) best = std::max(best, m.freq_mhz);
    }
  }
  return best;
}

const Measurement& Profile::fastest_measurement(int stage, InstructionKind kind) const {
  const auto& list = measurements(stage, kind);
  if (list.empty()) throw std::logic_error("fastest_measurement on an empty (stage, instruction)");
  return *std::max_element(list.begin(), list.end(),
                           [](const Measurement& a, const Measurement& b) { return a.freq_mhz < b.freq_mhz; });
}

}  // namespace wattcut
