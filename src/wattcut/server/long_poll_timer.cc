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
  const bool earliest = by_deadline_.IsEarliest(deadline);
  by_deadline_.Add(deadline, id);
  waits_.emplace(id, std::make_pair(deadline, std::move(wait)));
  if (earliest) wake_.NotifyAll();
  return id;
}

void LongPollTimer::Cancel(Id id) {
  MutexLock lock(mu_);
  auto it = waits_.find(id);
  if (it == waits_.end()) return;
  by_deadline_.Remove(it->second.first, id);
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
    std::vector<RoundWait> due;
    for (Id id : by_deadline_.TakeDue(Clock::now())) {
      auto it = waits_.find(id);
      due.push_back(std::move(it->second.second));
      waits_.erase(it);
    }
    if (due.empty()) {
      by_deadline_.WaitForNext(mu_, wake_);
      continue;
    }
    mu_.unlock();
    for (const RoundWait& wait : due) expire_(wait);
    mu_.lock();
  }
}

}  // namespace wattcut::server
