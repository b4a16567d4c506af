// How far the headroom policy's forecast (power_forecast.h) has been off on this row: for each
// forecast of the last hour, the highest reading of the window-long span after the moment it was
// made for (the moment a command sent with it lands), minus the forecast. The policy
// (row_power_policy.h) lowers its forecast by the median of these errors when that median is
// clearly below zero: a row whose forecast has over-predicted it for an hour is not locked for
// peaks it does not reach. A median near or above zero changes nothing.
//
// What is recorded, and why:
//   * forecasts at or above kRecordedFromFraction (85 % of the budget): the part of the day where
//     the policy may act; a row's brakes start from 89 to 92 % (docs/polca.md);
//   * from a window spanning at least half its length: a forecast from a few readings is not the
//     line the policy is built on. Those of younger windows (just after a level landed) are
//     checked apart, for the share of their trend that came true: (highest - base) / trend, where
//     base is the window's level with its rises and trend what its line adds ahead; the policy
//     carries only the median share (within 0 and 1) of a young window's trend where young
//     forecasts' median error is below -headroom_correction_deadband. A young line is tilted by
//     whatever its few readings hold: on a row whose bursts stop within seconds, it extrapolates
//     each burst's first seconds; on a row that ramps, it sees the ramp early;
//   * readings taken under another level than the forecast's count at the forecast's level, scaled
//     by the two levels' ceilings (row_ceiling.h; unscaled where either is unknown), so a
//     forecast that led to a lock is checked against about what the row would have read without
//     it, never against the lock's own lower readings alone;
//   * the last hour (kMemoryS) of closed forecasts, and no median from fewer than kMinForecasts
//     (five minutes of one-second readings), or kMinYoungForecasts young ones (a minute's worth:
//     a row has a young window for at most half a window after each level change, so young
//     forecasts are fewer; the median of 60 ratios is off by about a sixth of their spread,
//     1.25 sigma / sqrt(60)).
// It sees only the readings it is given: the policy gives it those that describe a level (taken
// after the level landed, not under the brake), in order of measurement; repeated or older
// readings are ignored.
#pragma once

#include <cstddef>
#include <deque>
#include <limits>
#include <optional>

namespace wattcut::polca {

class ForecastRecord {
 public:
  static constexpr double kRecordedFromFraction = 0.85;
  static constexpr double kMemoryS = 3600;
  static constexpr size_t kMinForecasts = 300;
  static constexpr size_t kMinYoungForecasts = 60;

  // `landing_s`: how far after its reading a forecast is for (the actuation latency); `span_s`:
  // the span after that whose highest reading it is checked against (the forecast's window).
  ForecastRecord(double landing_s, double span_s) : landing_s_(landing_s), span_s_(span_s) {}

  // A reading (fraction of the budget) taken under a level whose ceiling is `ceiling` (infinite
  // where unknown). It counts towards every open forecast whose span holds it, and closes those
  // whose span it has passed.
  void AddReading(double measured_at_s, double fraction, double ceiling);
  // A forecast made on the reading at `measured_at_s` (the newest given) from a window spanning
  // `window_span_s`, under a level whose ceiling is `ceiling`. Kept only as described above.
  void AddForecast(double measured_at_s, double forecast, double window_span_s, double ceiling);
  // Whether a forecast's window, spanning `window_span_s`, is young: under half the span it is
  // checked against (the forecast's window length).
  bool IsYoung(double window_span_s) const { return window_span_s < span_s_ / 2; }
  // A forecast from a window spanning less than half its length (a young window, just after a
  // level landed): `base` is its level and rises, `trend` (> 0) what the line adds ahead.
  void AddYoungForecast(double measured_at_s, double base, double trend, double ceiling);

  // How much of a young window's trend the row went on to read, as the median over the young
  // forecasts closed in the last hour of (highest reading - base) / trend, within [0, 1]; none
  // with fewer than kMinYoungForecasts.
  std::optional<double> YoungTrendShare() const;
  // The median error (highest reading - (base + trend)) of the same young forecasts; none with
  // fewer than kMinYoungForecasts.
  std::optional<double> YoungMedianError() const;

  // The median error of the forecasts closed in the last hour (the upper one of an even count);
  // none with fewer than kMinForecasts.
  std::optional<double> MedianError() const;
  // Closed forecasts in memory.
  size_t size() const { return errors_.size(); }
  void Clear();

 private:
  struct Open {
    double made_at_s;
    double forecast;
    double ceiling;
    double highest = -1;  // the highest reading of its span so far, at its level; -1: none yet
    double trend = 0;     // > 0: a young forecast, whose forecast field holds its base
  };
  struct Closed {
    double closed_at_s;
    double error;
  };
  double landing_s_;
  double span_s_;
  double newest_s_ = -std::numeric_limits<double>::infinity();  // no reading yet
  std::deque<Open> open_;
  std::deque<Closed> errors_;
  // The closed young forecasts, pushed and dropped together: each one's (highest - base) / trend
  // in `young_shares_`, its highest - (base + trend) in `young_errors_`.
  std::deque<Closed> young_shares_;
  std::deque<Closed> young_errors_;

  // The upper median of the closed entries' `error` (the upper one of an even count).
  static double UpperMedian(const std::deque<Closed>& closed);
};

}  // namespace wattcut::polca
