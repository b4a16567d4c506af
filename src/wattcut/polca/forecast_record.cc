#include "wattcut/polca/forecast_record.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace wattcut::polca {

void ForecastRecord::AddReading(double measured_at_s, double fraction, double ceiling) {
  if (measured_at_s <= newest_s_) return;
  newest_s_ = measured_at_s;
  for (Open& open : open_) {
    const double from_s = open.made_at_s + landing_s_;
    if (measured_at_s < from_s || measured_at_s > from_s + span_s_) continue;
    const bool scaled = std::isfinite(open.ceiling) && std::isfinite(ceiling);
    open.highest = std::max(open.highest, fraction * (scaled ? open.ceiling / ceiling : 1.0));
  }
  while (!open_.empty() && measured_at_s >= open_.front().made_at_s + landing_s_ + span_s_) {
    const Open& open = open_.front();
    // A span without a reading (the brake held it, or the readings stopped) tells nothing.
    if (open.highest >= 0) errors_.push_back({measured_at_s, open.highest - open.forecast});
    open_.pop_front();
  }
  while (!errors_.empty() && errors_.front().closed_at_s < measured_at_s - kMemoryS) errors_.pop_front();
}

void ForecastRecord::AddForecast(double measured_at_s, double forecast, double window_span_s, double ceiling) {
  if (forecast < kRecordedFromFraction || window_span_s < span_s_ / 2) return;
  if (!open_.empty() && measured_at_s <= open_.back().made_at_s) return;
  open_.push_back({measured_at_s, forecast, ceiling});
}

std::optional<double> ForecastRecord::MedianError() const {
  if (errors_.size() < kMinForecasts) return std::nullopt;
  std::vector<double> errors;
  errors.reserve(errors_.size());
  for (const Closed& c : errors_) errors.push_back(c.error);
  auto middle = errors.begin() + static_cast<std::ptrdiff_t>(errors.size() / 2);
  std::nth_element(errors.begin(), middle, errors.end());
  return *middle;
}

void ForecastRecord::Clear() { *this = ForecastRecord(landing_s_, span_s_); }

}  // namespace wattcut::polca
