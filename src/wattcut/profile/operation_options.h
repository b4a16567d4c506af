// From the raw measurements of one (stage, instruction) to the candidate options the
// planner chooses among (PERSEUS.md section 3, steps 1-3):
//   1. Pareto filter on (time, energy). Strict: drop an option when another is strictly
//      faster and strictly cheaper. When 3 or fewer survive, retry with the soft filter:
//      drop an option only when another is faster and cheaper than it even after its own
//      time and energy are multiplied by noise_factor (< 1).
//   2. Quantise time to integer unit times, q = floor(time / unit_time) (computed as
//      Python's float floor division does, so that results match the reference bit for
//      bit); among options with the same q keep the one with the largest energy.
//   3. Effective energy: cost = energy - p2p_power * q * unit_time.
// Every option's duration is an integer in [1, kMaxDurationUnits] and its cost finite:
// a time that rounds to 0 units, or to more than a double holds exactly, is an error.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// 2^53: every duration, and the times and costs computed from it, is exact in a double.
inline constexpr int64_t kMaxDurationUnits = int64_t{1} << 53;

struct OperationOption {
  int64_t duration_units = 0;  // q
  double cost_j = 0;           // effective energy
  int freq_mhz = 0;
  double time_s = 0;    // measured
  double energy_j = 0;  // measured
};

struct OperationOptions {
  std::vector<OperationOption> options;  // sorted by duration_units ascending (fastest first)
  bool used_soft_filter = false;
};

// Python's `a // b` for positive doubles.
double PythonFloorDiv(double a, double b);

std::vector<Measurement> ParetoFilter(const std::vector<Measurement>& measurements, double noise_factor);

// Fails when unit_time_s <= 0, noise_factor is not in (0, 1], a measurement's time is
// not finite and > 0 or its energy not finite and >= 0, a kept time quantises to 0 units
// or to more than kMaxDurationUnits, an effective energy is not finite, or nothing
// survives. Messages name the frequency; the caller adds the stage and instruction.
Result<OperationOptions> BuildOperationOptions(const std::vector<Measurement>& measurements, double unit_time_s,
                                               double noise_factor, double p2p_power_w);

}  // namespace wattcut
