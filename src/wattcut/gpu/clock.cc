#include "wattcut/gpu/clock.h"

#include <chrono>
#include <thread>

namespace wattcut {

double SteadyClock::NowS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SteadyClock::SleepForS(double seconds) {
  if (seconds <= 0) return;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(seconds));
  // Sleep to within half a millisecond of the end, then yield until it: the simulated GPU's
  // computations must last their modelled time, not that plus the scheduler's wake-up delay.
  const auto margin = std::chrono::microseconds(500);
  if (end - std::chrono::steady_clock::now() > margin) std::this_thread::sleep_until(end - margin);
  while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
}

void ManualClock::AdvanceS(double seconds) {
  if (seconds <= 0) return;
  double now = now_s_.load();
  while (!now_s_.compare_exchange_weak(now, now + seconds)) {
  }
}

}  // namespace wattcut
