#include "wattcut/server/round_barrier.h"

#include <algorithm>

namespace wattcut::server {

RoundBarrier::RoundBarrier(size_t world_size, int64_t completed_rounds)
    : waiting_(world_size, 0), waiters_(world_size), round_(completed_rounds) {}

void RoundBarrier::Reset(size_t world_size, int64_t completed_rounds) {
  waiting_.assign(world_size, 0);
  waiters_.assign(world_size, RoundWaiter{});
  num_waiting_ = 0;
  round_ = completed_rounds;
}

bool RoundBarrier::Join(size_t rank) {
  if (!waiting_.at(rank)) {
    waiting_[rank] = 1;
    ++num_waiting_;
  }
  return num_waiting_ == waiting_.size();
}

void RoundBarrier::Park(size_t rank, RoundWaiter waiter) { waiters_.at(rank) = std::move(waiter); }

std::optional<RoundWaiter> RoundBarrier::Leave(size_t rank, uint64_t waiter_id) {
  RoundWaiter& waiter = waiters_.at(rank);
  if (!waiter.reply || waiter.id != waiter_id) return std::nullopt;
  RoundWaiter out = std::move(waiter);
  waiter = RoundWaiter{};
  Leave(rank);
  return out;
}

void RoundBarrier::Leave(size_t rank) {
  if (waiting_.at(rank)) {
    waiting_[rank] = 0;
    --num_waiting_;
  }
}

void RoundBarrier::Complete() {
  ++round_;
  std::fill(waiting_.begin(), waiting_.end(), 0);
  num_waiting_ = 0;
}

std::vector<std::pair<size_t, RoundWaiter>> RoundBarrier::TakeWaiters() {
  std::vector<std::pair<size_t, RoundWaiter>> out;
  for (size_t rank = 0; rank < waiters_.size(); ++rank) {
    if (!waiters_[rank].reply) continue;
    out.emplace_back(rank, std::move(waiters_[rank]));
    waiters_[rank] = RoundWaiter{};
    Leave(rank);
  }
  return out;
}

std::vector<size_t> RoundBarrier::RanksNotWaiting(size_t except, size_t limit) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < waiting_.size() && out.size() < limit; ++i) {
    if (!waiting_[i] && i != except) out.push_back(i);
  }
  return out;
}

}  // namespace wattcut::server
