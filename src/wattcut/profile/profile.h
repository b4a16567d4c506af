// A measured (or modelled) profile of one pipeline: for every stage and instruction
// kind, the mean time and energy of one computation at each SM frequency.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/instruction.h"

namespace wattcut {

struct Measurement {
  int freq_mhz = 0;
  double time_s = 0;    // mean wall time of one computation
  double energy_j = 0;  // mean GPU energy of one computation
};

class Profile {
 public:
  Profile() = default;
  explicit Profile(int num_stages) : stages_(static_cast<size_t>(num_stages)) {}

  int num_stages() const { return static_cast<int>(stages_.size()); }
  const std::vector<Measurement>& measurements(int stage, InstructionKind kind) const {
    return stages_.at(static_cast<size_t>(stage))[static_cast<size_t>(kind)];
  }
  std::vector<Measurement>& mutable_measurements(int stage, InstructionKind kind) {
    return stages_.at(static_cast<size_t>(stage))[static_cast<size_t>(kind)];
  }
  // Highest frequency measured anywhere in the profile (0 when empty).
  int max_freq_mhz() const;
  // The measurement at the highest frequency of (stage, kind); the "AllMax" option.
  const Measurement& fastest_measurement(int stage, InstructionKind kind) const;

 private:
  std::vector<std::array<std::vector<Measurement>, kNumInstructionKinds>> stages_;
};

}  // namespace wattcut
