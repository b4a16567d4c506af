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
    if (open.highest >= 0 && open.trend > 0) {
      young_shares_.push_back({measured_at_s, (open.highest - open.forecast) / open.trend});
      young_errors_.push_back({measured_at_s, open.highest - open.forecast - open.trend});
    } else if (open.highest >= 0) {
      errors_.push_back({measured_at_s, open.highest - open.forecast});
    }
    open_.pop_front();
  }
  while (!errors_.empty() && errors_.front().closed_at_s < measured_at_s - kMemoryS) errors_.pop_front();
  while (!young_shares_.empty() && young_shares_.front().closed_at_s < measured_at_s - kMemoryS) {
    young_shares_.pop_front();
    young_errors_.pop_front();
  }
}

void ForecastRecord::AddForecast(double measured_at_s, double forecast, double window_span_s, double ceiling) {
  if (forecast < kRecordedFromFraction || IsYoung(window_span_s)) return;
  if (!open_.empty() && measured_at_s <= open_.back().made_at_s) return;
  open_.push_back({measured_at_s, forecast, ceiling});
}

void ForecastRecord::AddYoungForecast(double measured_at_s, double base, double trend, double ceiling) {
  if (base + trend < kRecordedFromFraction || trend <= 0) return;
  if (!open_.empty() && measured_at_s <= open_.back().made_at_s) return;
  open_.push_back({measured_at_s, base, ceiling, -1, trend});
}

double ForecastRecord::UpperMedian(const std::deque<Closed>& closed) {
  std::vector<double> values;
  values.reserve(closed.size());
  for (const Closed& c : closed) values.push_back(c.error);
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::optional<double> ForecastRecord::MedianError() const {
  if (errors_.size() < kMinForecasts) return std::nullopt;
  return UpperMedian(errors_);
}

std::optional<double> ForecastRecord::YoungMedianError() const {
  if (young_errors_.size() < kMinYoungForecasts) return std::nullopt;
  return UpperMedian(young_errors_);
}

std::optional<double> ForecastRecord::YoungTrendShare() const {
  if (young_shares_.size() < kMinYoungForecasts) return std::nullopt;
  return std::clamp(UpperMedian(young_shares_), 0.0, 1.0);
}

void ForecastRecord::Clear() { *this = ForecastRecord(landing_s_, span_s_); }

}  // namespace wattcut::polca
