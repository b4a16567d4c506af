#include "wattcut/polca/power_forecast.h"

#include <algorithm>

namespace wattcut::polca {

void PowerForecast::Add(double measured_at_s, double fraction) {
  if (!readings_.empty() && measured_at_s <= readings_.back().measured_at_s) return;
  readings_.push_back({measured_at_s, fraction});
  while (readings_.front().measured_at_s < measured_at_s - window_s_) readings_.pop_front();
}

double PowerForecast::span_s() const {
  return readings_.size() < 2 ? 0.0 : readings_.back().measured_at_s - readings_.front().measured_at_s;
}

double PowerForecast::Highest() const {
  double highest = 0;
  for (const Reading& r : readings_) highest = std::max(highest, r.fraction);
  return highest;
}

double PowerForecast::PeakAt(double at_s) const { return PeakPartsAt(at_s).value; }

PowerForecast::Peak PowerForecast::PeakPartsAt(double at_s) const {
  if (readings_.empty()) return {};
  if (readings_.size() == 1) return {readings_.front().fraction, readings_.front().fraction, 0};
  // Times relative to the newest reading keep the sums well conditioned over long runs.
  const double t0 = readings_.back().measured_at_s;
  const double n = static_cast<double>(readings_.size());
  double mean_t = 0;
  double mean_p = 0;
  for (const Reading& r : readings_) {
    mean_t += r.measured_at_s - t0;
    mean_p += r.fraction;
  }
  mean_t /= n;
  mean_p /= n;
  double stt = 0;
  double stp = 0;
  for (const Reading& r : readings_) {
    const double dt = r.measured_at_s - t0 - mean_t;
    stt += dt * dt;
    stp += dt * (r.fraction - mean_p);
  }
  const double slope = stt > 0 ? stp / stt : 0;
  auto line = [&](double t) { return mean_p + slope * (t - t0 - mean_t); };
  double rise = 0;
  for (const Reading& r : readings_) rise = std::max(rise, r.fraction - line(r.measured_at_s));
  // Never further ahead than the window looks back: two readings a second apart say little about
  // the next 40 s.
  const double ahead_s = std::min(at_s - t0, t0 - readings_.front().measured_at_s);
  return {std::max(line(t0 + ahead_s), line(t0)) + rise, line(t0) + rise, std::max(0.0, line(t0 + ahead_s) - line(t0))};
}

}  // namespace wattcut::polca
