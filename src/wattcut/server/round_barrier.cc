#include "wattcut/server/round_barrier.h"

#include <algorithm>

namespace wattcut::server {

RoundBarrier::RoundBarrier(size_t world_size, int64_t completed_rounds)
    : waiting_(world_size, 0), round_(completed_rounds) {}

void RoundBarrier::Reset(size_t world_size, int64_t completed_rounds) {
  waiting_.assign(world_size, 0);
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
  cv_.notify_all();
}

bool RoundBarrier::Wait(Mutex& mu, int64_t joined_after_round, std::chrono::milliseconds timeout,
                        const std::function<bool()>& stop) {
  cv_.wait_for(mu, timeout, [&] { return round_ != joined_after_round || stop(); });
  return round_ != joined_after_round;
}

std::vector<size_t> RoundBarrier::RanksNotWaiting(size_t except, size_t limit) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < waiting_.size() && out.size() < limit; ++i) {
    if (!waiting_[i] && i != except) out.push_back(i);
  }
  return out;
}

}  // namespace wattcut::server
