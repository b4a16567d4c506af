#include "wattcut/base/clock.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "wattcut/base/steady_time.h"
#include "wattcut/base/unix_time.h"

namespace wattcut {

double SteadyClock::NowS() const { return SteadyNowS(); }

void SteadyClock::SleepForS(double seconds) {
  if (seconds <= 0) return;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(seconds));
  // Sleep to within half a millisecond of the end, then yield until it: a simulated computation
  // should last its modelled time, not that plus the scheduler's wake-up delay.
  const auto margin = std::chrono::microseconds(500);
  if (end - std::chrono::steady_clock::now() > margin) std::this_thread::sleep_until(end - margin);
  while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
}

double SystemClock::NowS() const { return UnixNowS(); }

void SystemClock::SleepForS(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

void ManualClock::AdvanceS(double seconds) {
  if (seconds <= 0) return;
  std::lock_guard lock(mutex_);
  const double target = now_s_.load() + seconds;
  while (true) {
    auto due = std::min_element(periodic_.begin(), periodic_.end(),
                                [](const Periodic& a, const Periodic& b) { return a.next_s < b.next_s; });
    if (due == periodic_.end() || due->next_s > target) break;
    now_s_.store(std::max(now_s_.load(), due->next_s));
    due->next_s += due->interval_s;
    due->work();
  }
  now_s_.store(target);
}

uint64_t ManualClock::AddPeriodic(double interval_s, std::function<void()> work) {
  std::lock_guard lock(mutex_);
  const uint64_t id = next_id_++;
  periodic_.push_back({id, interval_s, now_s_.load() + interval_s, std::move(work)});
  return id;
}

void ManualClock::RemovePeriodic(uint64_t id) {
  std::lock_guard lock(mutex_);
  std::erase_if(periodic_, [&](const Periodic& p) { return p.id == id; });
}

}  // namespace wattcut
