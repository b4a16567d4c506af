// Ids ordered by when they are due, for a thread that acts on each as its time comes (the
// server's long-poll deadlines, the streams' next pieces). Not thread-safe: its owner's mutex
// guards it, and WaitForNext waits on the owner's condition variable, releasing that mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "wattcut/base/mutex.h"

namespace wattcut {

class DeadlineQueue {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;

  void Add(Clock::time_point when, Id id) { due_.emplace(when, id); }
  // Whether it was there (an id added at `when`).
  bool Remove(Clock::time_point when, Id id) { return due_.erase({when, id}) > 0; }
  bool empty() const { return due_.empty(); }
  size_t size() const { return due_.size(); }
  void clear() { due_.clear(); }
  // Whether `when` is earlier than everything queued (a waiting thread must be woken for it).
  bool IsEarliest(Clock::time_point when) const { return due_.empty() || when < due_.begin()->first; }

  // The ids due by `now`, taken out of the queue, earliest first.
  std::vector<Id> TakeDue(Clock::time_point now) {
    std::vector<Id> due;
    while (!due_.empty() && due_.begin()->first <= now) {
      due.push_back(due_.begin()->second);
      due_.erase(due_.begin());
    }
    return due;
  }
  // Waits on `wake`, releasing `mu`, until the earliest id is due or the owner wakes it (an
  // earlier id, a stop): at most until the earliest is due, without end while none is queued.
  void WaitForNext(Mutex& mu, CondVar& wake) const REQUIRES(mu) {
    if (due_.empty()) {
      wake.Wait(mu);
    } else if (Clock::now() < due_.begin()->first) {
      wake.WaitUntil(mu, due_.begin()->first);
    }
  }

 private:
  std::set<std::pair<Clock::time_point, Id>> due_;
};

}  // namespace wattcut
