#include "wattcut/profile/operation_options.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace wattcut {

double PythonFloorDiv(double a, double b) {
  // CPython's float_floor_div (Objects/floatobject.c, float_divmod), for b > 0.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0.0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

std::vector<Measurement> ParetoFilter(const std::vector<Measurement>& measurements, double noise_factor) {
  std::vector<Measurement> kept;
  for (const Measurement& m : measurements) {
    bool dominated = false;
    for (const Measurement& other : measurements) {
      if (other.time_s < m.time_s * noise_factor && other.energy_j < m.energy_j * noise_factor) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push_back(m);
  }
  return kept;
}

Result<OperationOptions> BuildOperationOptions(const std::vector<Measurement>& measurements,
                                               double unit_time_s, double noise_factor,
                                               double p2p_power_w) {
  if (!(unit_time_s > 0) || !std::isfinite(unit_time_s)) {
    return Error{"unit time must be a positive number of seconds"};
  }
  if (!(noise_factor > 0 && noise_factor <= 1)) return Error{"noise factor must be in (0, 1]"};
  if (measurements.empty()) return Error{"no measurements"};

  OperationOptions result;
  std::vector<Measurement> kept = ParetoFilter(measurements, 1.0);
  if (kept.size() <= 3 && noise_factor < 1.0) {
    kept = ParetoFilter(measurements, noise_factor);
    result.used_soft_filter = true;
  }
  // Same quantised time: keep the largest energy (its time is closest to q * unit).
  std::map<int64_t, Measurement> by_q;
  for (const Measurement& m : kept) {
    auto q = static_cast<int64_t>(PythonFloorDiv(m.time_s, unit_time_s));
    auto it = by_q.find(q);
    if (it == by_q.end() || m.energy_j > it->second.energy_j) by_q[q] = m;
  }
  for (const auto& [q, m] : by_q) {
    result.options.push_back(OperationOption{q, m.energy_j - p2p_power_w * static_cast<double>(q) * unit_time_s,
                                             m.freq_mhz, m.time_s, m.energy_j});
  }
  if (result.options.empty()) return Error{"no options left after filtering"};
  return result;
}

}  // namespace wattcut
