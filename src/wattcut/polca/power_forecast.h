// What the row's power will read when a command sent now lands: the forecast the headroom policy
// (row_power_policy.h) escalates and releases on. It keeps the readings of the last `window_s`
// (fractions of the row budget, in order of measurement) and fits a least-squares line to them.
// The expected peak at a time is
//   max(line(newest + ahead), line(newest)) + the largest amount any reading rose above the line,
// ahead = at - newest, but no more than the window's span (it never extrapolates further than it
// has looked back), so a rising trend is carried forward, a falling one never lowers the
// expectation below the present level, and a window whose readings are spiky expects its spikes
// again. A policy clears
// it when its level changes, so the window describes one level in effect.
#pragma once

#include <cstddef>
#include <deque>

namespace wattcut::polca {

class PowerForecast {
 public:
  explicit PowerForecast(double window_s) : window_s_(window_s) {}

  // A reading measured at `measured_at_s`; one not newer than the newest is ignored (a reading
  // delivered twice or out of order never counts twice). Readings older than the window go.
  void Add(double measured_at_s, double fraction);
  void Clear() { readings_.clear(); }

  size_t size() const { return readings_.size(); }
  // Newest minus oldest measurement time of the window (0 with fewer than two readings).
  double span_s() const;
  // The expected peak reading at `at_s` (see above); with one reading, that reading; 0 when empty.
  double PeakAt(double at_s) const;
  // PeakAt (`value`) and its two parts: the line at the newest reading plus the largest rise
  // (`base`), and how far the trend carries it ahead (`trend`, never negative); value = base + trend
  // up to rounding.
  struct Peak {
    double value = 0;
    double base = 0;
    double trend = 0;
  };
  Peak PeakPartsAt(double at_s) const;
  // The highest reading of the window; 0 when empty.
  double Highest() const;

 private:
  struct Reading {
    double measured_at_s;
    double fraction;
  };
  double window_s_;
  std::deque<Reading> readings_;
};

}  // namespace wattcut::polca
