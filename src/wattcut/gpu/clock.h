// Time sources for the GPU layer: the real monotonic clock, or a clock the caller moves by hand
// (deterministic tests of the simulated backend).
#pragma once

#include <atomic>

namespace wattcut {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary fixed origin; never decreases.
  virtual double NowS() const = 0;
  // Lets `seconds` pass: waits on a real clock (to within microseconds), advances a manual one.
  virtual void SleepForS(double seconds) = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  double NowS() const override;
  void SleepForS(double seconds) override;
};

// Starts at 0 and moves only through SleepForS / AdvanceS. Thread-safe.
class ManualClock final : public Clock {
 public:
  double NowS() const override { return now_s_.load(); }
  void SleepForS(double seconds) override { AdvanceS(seconds); }
  void AdvanceS(double seconds);

 private:
  std::atomic<double> now_s_{0.0};
};

}  // namespace wattcut
