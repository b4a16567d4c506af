// The schedule round barrier of one job (the Zeus protocol): every rank asks for the
// schedule of the next round; the round completes when all world_size ranks have asked,
// and then every one of them is answered with that round's schedule.
//
// A rank that asks before the round is complete waits: the barrier keeps its waiter (what
// answers it later, job_rounds.h), not a thread. The barrier holds no lock of its own: every
// call is made with the job's mutex held. The caller decides what the completed round serves
// (between Join returning true and Complete) and answers the waiters it takes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::server {

// What answers a waiting rank, once: called with the job's mutex held, so it must not block
// (the server's hands the answer to the connection's reactor).
using RoundReply = std::function<void(Result<std::string> answer)>;

struct RoundWaiter {
  uint64_t id = 0;  // unique within the job: a rank that waits again is another waiter
  RoundReply reply;
  uint64_t timer_id = 0;  // its deadline (long_poll_timer.h)
};

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
  // `rank`, joined, waits for the round with `waiter` (a new id: NextWaiterId()).
  void Park(size_t rank, RoundWaiter waiter);
  uint64_t NextWaiterId() { return ++last_waiter_id_; }
  // `rank` stops waiting without the round completing; its waiter, if it is `waiter_id` (nullopt
  // when that wait has ended already: answered, or the rank waits again as another waiter).
  std::optional<RoundWaiter> Leave(size_t rank, uint64_t waiter_id);
  // `rank` stops waiting (a rank that joined and was refused before it parked).
  void Leave(size_t rank);
  // Ends the round every rank joined: counts it and empties the barrier. The waiters stay to be
  // taken (TakeWaiters) and answered.
  void Complete();
  // Every waiter, with its rank; the ranks stop waiting (a completed round's, or every wait
  // when the job is deleted or the server stops).
  std::vector<std::pair<size_t, RoundWaiter>> TakeWaiters();

  // Up to `limit` ranks, in order, that are not waiting, other than `except`: the ones a
  // timed-out rank was waiting for.
  std::vector<size_t> RanksNotWaiting(size_t except, size_t limit) const;

 private:
  std::vector<uint8_t> waiting_;
  std::vector<RoundWaiter> waiters_;  // by rank; reply empty where none waits
  size_t num_waiting_ = 0;
  int64_t round_ = 0;
  uint64_t last_waiter_id_ = 0;
};

}  // namespace wattcut::server
