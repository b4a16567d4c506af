// Time sources: the real monotonic clock, the wall clock, or a simulated clock that moves only when
// told to (the simulated backend's GPUs advance it as they compute; a test steps it past a lease),
// which makes every simulated run deterministic and as fast as the CPU allows.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace wattcut {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the clock's origin: arbitrary and fixed for SteadyClock (never decreases), the
  // Unix epoch for SystemClock, where the test put it for ManualClock.
  virtual double NowS() const = 0;
  // Lets `seconds` pass: waits on a real clock (to within microseconds), advances a manual one.
  virtual void SleepForS(double seconds) = 0;
  // Periodic work every `interval_s` of this clock's time. A simulated clock runs `work` itself,
  // on the thread that advances it, at each due time (NowS() reads that time), and returns a
  // non-zero id for RemovePeriodic. A real clock returns 0: the caller runs its own thread.
  virtual uint64_t AddPeriodic(double interval_s, std::function<void()> work) {
    (void)interval_s;
    (void)work;
    return 0;
  }
  // Stops periodic work; once it returns, `work` is not running and will not run again.
  virtual void RemovePeriodic(uint64_t id) { (void)id; }
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  double NowS() const override;
  void SleepForS(double seconds) override;
};

// The wall clock: Unix seconds (std::chrono::system_clock). It steps when the system's time is
// set; use it only for what must mean the same after a restart (a lease's expiry, a deadline).
class SystemClock final : public Clock {
 public:
  double NowS() const override;
  void SleepForS(double seconds) override;
};

// Starts at `start_s` (0 by default) and moves only through SleepForS / AdvanceS, stopping at every periodic work's due
// time on the way. Thread-safe; periodic work must not advance the clock itself.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start_s = 0) : now_s_(start_s) {}
  double NowS() const override { return now_s_.load(); }
  void SleepForS(double seconds) override { AdvanceS(seconds); }
  void AdvanceS(double seconds);
  uint64_t AddPeriodic(double interval_s, std::function<void()> work) override;
  void RemovePeriodic(uint64_t id) override;

 private:
  struct Periodic {
    uint64_t id;
    double interval_s;
    double next_s;
    std::function<void()> work;
  };
  std::atomic<double> now_s_{0.0};
  std::mutex mutex_;  // held while advancing, so RemovePeriodic waits for running work
  std::vector<Periodic> periodic_;
  uint64_t next_id_ = 1;
};

}  // namespace wattcut
