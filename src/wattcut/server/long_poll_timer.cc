#include "wattcut/server/long_poll_timer.h"

#include <vector>

namespace wattcut::server {

LongPollTimer::LongPollTimer(std::function<void(const RoundWait&)> expire)
    : expire_(std::move(expire)), thread_([this] { Run(); }) {}

LongPollTimer::~LongPollTimer() { Stop(); }

LongPollTimer::Id LongPollTimer::Add(Clock::time_point deadline, RoundWait wait) {
  MutexLock lock(mu_);
  if (stopped_) return 0;
  const Id id = next_id_++;
  const bool earliest = by_deadline_.empty() || deadline < by_deadline_.begin()->first;
  by_deadline_.emplace(deadline, id);
  waits_.emplace(id, std::make_pair(deadline, std::move(wait)));
  if (earliest) wake_.NotifyAll();
  return id;
}

void LongPollTimer::Cancel(Id id) {
  MutexLock lock(mu_);
  auto it = waits_.find(id);
  if (it == waits_.end()) return;
  by_deadline_.erase({it->second.first, id});
  waits_.erase(it);
}

size_t LongPollTimer::size() const {
  MutexLock lock(mu_);
  return waits_.size();
}

void LongPollTimer::Stop() {
  {
    MutexLock lock(mu_);
    stopped_ = true;
    by_deadline_.clear();
    waits_.clear();
  }
  wake_.NotifyAll();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void LongPollTimer::Run() {
  MutexLock lock(mu_);
  while (!stopped_) {
    if (by_deadline_.empty()) {
      wake_.Wait(mu_);
      continue;
    }
    const Clock::time_point next = by_deadline_.begin()->first;
    if (Clock::now() < next) {
      wake_.WaitUntil(mu_, next);
      continue;
    }
    std::vector<RoundWait> due;
    const Clock::time_point now = Clock::now();
    while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
      const Id id = by_deadline_.begin()->second;
      by_deadline_.erase(by_deadline_.begin());
      auto it = waits_.find(id);
      due.push_back(std::move(it->second.second));
      waits_.erase(it);
    }
    mu_.unlock();
    for (const RoundWait& wait : due) expire_(wait);
    mu_.lock();
  }
}

}  // namespace wattcut::server
