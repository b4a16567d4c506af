// The schedule round barrier of one job (the Zeus protocol): every rank asks for the
// schedule of the next round; the round completes when all world_size ranks have asked,
// and then every one of them is answered with that round's schedule.
//
// The barrier holds no lock of its own: every call is made with the job's mutex held, and
// Wait releases it while waiting (a condition variable on that mutex). The caller decides
// what the completed round serves (between Join returning true and Complete).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <vector>

#include "wattcut/base/mutex.h"

namespace wattcut::server {

class RoundBarrier {
 public:
  explicit RoundBarrier(size_t world_size = 0, int64_t completed_rounds = 0);
  // Sizes the barrier for `world_size` ranks, none waiting, `completed_rounds` done (a job
  // registered or read back from the store). Only while no rank waits.
  void Reset(size_t world_size, int64_t completed_rounds);

  // Rounds completed so far; the ranks waiting now wait for round completed_rounds() + 1.
  int64_t completed_rounds() const { return round_; }
  size_t world_size() const { return waiting_.size(); }
  size_t num_waiting() const { return num_waiting_; }
  bool is_waiting(size_t rank) const { return waiting_.at(rank) != 0; }

  // `rank` (< world_size, not waiting) asks for the next round. True when it was the last
  // rank missing: the caller decides the round, then calls Complete().
  bool Join(size_t rank);
  // `rank` stops waiting without the round completing (timed out, refused).
  void Leave(size_t rank);
  // Ends the round every rank joined: counts it, empties the barrier, wakes the waiters.
  void Complete();

  // Waits, releasing `mu` (the job's mutex, held), until the round `rank` joined is
  // completed, `stop()` is true (checked on every wake-up: NotifyAll() after a deletion or
  // at shutdown), or `timeout` passes. True when the round completed. Does not Leave.
  bool Wait(Mutex& mu, int64_t joined_after_round, std::chrono::milliseconds timeout, const std::function<bool()>& stop)
      REQUIRES(mu);
  // Wakes every waiter (to re-check `stop`).
  void NotifyAll() { cv_.notify_all(); }

  // Up to `limit` ranks, in order, that are not waiting, other than `except`: the ones a
  // timed-out rank was waiting for.
  std::vector<size_t> RanksNotWaiting(size_t except, size_t limit) const;

 private:
  std::condition_variable_any cv_;
  std::vector<uint8_t> waiting_;
  size_t num_waiting_ = 0;
  int64_t round_ = 0;
};

}  // namespace wattcut::server
