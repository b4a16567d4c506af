#include "wattcut/profile/operation_options.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "wattcut/base/general_text.h"

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
  // m is dominated when some measurement has time < m.time * noise_factor and energy <
  // m.energy * noise_factor. Sorted by time, the measurements with time below a threshold
  // are a prefix, so the question is whether that prefix's least energy is below the
  // energy threshold: O(n log n) instead of comparing every pair (a 400,000-row profile
  // took 15 s). A NaN compares false both ways: such a measurement dominates nothing and
  // is never dominated, as in the pairwise definition, so it is left out of the prefix.
  std::vector<std::pair<double, double>> by_time;  // (time, energy), finite or infinite
  by_time.reserve(measurements.size());
  for (const Measurement& m : measurements) {
    if (!std::isnan(m.time_s) && !std::isnan(m.energy_j)) by_time.emplace_back(m.time_s, m.energy_j);
  }
  std::sort(by_time.begin(), by_time.end());
  std::vector<double> times(by_time.size()), least_energy(by_time.size());
  for (size_t i = 0; i < by_time.size(); ++i) {
    times[i] = by_time[i].first;
    least_energy[i] = i == 0 ? by_time[i].second : std::min(least_energy[i - 1], by_time[i].second);
  }
  std::vector<Measurement> kept;
  for (const Measurement& m : measurements) {
    const double time_below = m.time_s * noise_factor;
    const double energy_below = m.energy_j * noise_factor;
    const auto faster = static_cast<size_t>(std::lower_bound(times.begin(), times.end(), time_below) - times.begin());
    const bool dominated = faster > 0 && least_energy[faster - 1] < energy_below;
    if (!dominated) kept.push_back(m);
  }
  return kept;
}

Result<OperationOptions> BuildOperationOptions(const std::vector<Measurement>& measurements, double unit_time_s,
                                               double noise_factor, double p2p_power_w) {
  if (!(unit_time_s > 0) || !std::isfinite(unit_time_s)) {
    return Error{"unit time must be a positive number of seconds"};
  }
  if (!(noise_factor > 0 && noise_factor <= 1)) return Error{"noise factor must be in (0, 1]"};
  if (measurements.empty()) return Error{"no measurements"};

  for (const Measurement& m : measurements) {
    if (!(m.time_s > 0) || !std::isfinite(m.time_s)) {
      return Error{"the time at " + std::to_string(m.freq_mhz) + " MHz must be a finite number of seconds > 0, got " +
                   GeneralText(m.time_s)};
    }
    if (!(m.energy_j >= 0) || !std::isfinite(m.energy_j)) {
      return Error{"the energy at " + std::to_string(m.freq_mhz) + " MHz must be a finite number of joules >= 0, got " +
                   GeneralText(m.energy_j)};
    }
  }

  OperationOptions result;
  std::vector<Measurement> kept = ParetoFilter(measurements, 1.0);
  if (kept.size() <= 3 && noise_factor < 1.0) {
    kept = ParetoFilter(measurements, noise_factor);
    result.used_soft_filter = true;
  }
  // Same quantised time: keep the largest energy (its time is closest to q * unit).
  std::map<int64_t, Measurement> by_q;
  for (const Measurement& m : kept) {
    const double q_units = PythonFloorDiv(m.time_s, unit_time_s);
    if (!(q_units >= 1)) {
      return Error{"the time at " + std::to_string(m.freq_mhz) + " MHz (" + GeneralText(m.time_s) +
                   " s) is shorter than one unit time (" + GeneralText(unit_time_s) +
                   " s) and would take 0 units: use a unit time of at most " + GeneralText(m.time_s) + " s"};
    }
    if (!(q_units <= static_cast<double>(kMaxDurationUnits))) {
      return Error{"the time at " + std::to_string(m.freq_mhz) + " MHz (" + GeneralText(m.time_s) + " s) is " +
                   GeneralText(q_units) + " unit times of " + GeneralText(unit_time_s) +
                   " s, more than the 2^53 a duration may have: use a coarser unit time"};
    }
    const auto q = static_cast<int64_t>(q_units);
    auto it = by_q.find(q);
    if (it == by_q.end() || m.energy_j > it->second.energy_j) by_q[q] = m;
  }
  for (const auto& [q, m] : by_q) {
    const double cost_j = m.energy_j - p2p_power_w * static_cast<double>(q) * unit_time_s;
    if (!std::isfinite(cost_j)) {
      return Error{"the effective energy at " + std::to_string(m.freq_mhz) + " MHz (" + GeneralText(m.energy_j) +
                   " J less " + GeneralText(p2p_power_w) + " W of blocking power over " + GeneralText(m.time_s) +
                   " s) is not a finite number"};
    }
    result.options.push_back(OperationOption{q, cost_j, m.freq_mhz, m.time_s, m.energy_j});
  }
  if (result.options.empty()) return Error{"no options left after filtering"};
  return result;
}

}  // namespace wattcut
