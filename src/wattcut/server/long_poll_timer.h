// The deadlines of the schedule long polls that wait (job_rounds.h): each waiting rank has one
// here, cancelled when it is answered; one that passes is handed to `expire` on the timer's own
// thread, with no lock held (the registry then locks the job and ends that wait, if it still
// waits: a round completing at the same moment wins or loses under the job's lock).
//
// One thread for every long poll of the server: a waiting rank costs an entry here (its
// deadline, its id, its job id), not a thread. Adding and cancelling are O(log n).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "wattcut/base/deadline_queue.h"
#include "wattcut/base/mutex.h"

namespace wattcut::server {

// Which wait: the job, the rank, and the waiter (a rank that waits again is another waiter).
struct RoundWait {
  std::string job_id;
  size_t rank = 0;
  uint64_t waiter_id = 0;
};

class LongPollTimer {
 public:
  using Clock = DeadlineQueue::Clock;
  using Id = DeadlineQueue::Id;

  explicit LongPollTimer(std::function<void(const RoundWait&)> expire);
  ~LongPollTimer();
  LongPollTimer(const LongPollTimer&) = delete;
  LongPollTimer& operator=(const LongPollTimer&) = delete;

  // `wait` expires at `deadline` unless cancelled first. After Stop: 0, and it never expires.
  Id Add(Clock::time_point deadline, RoundWait wait) EXCLUDES(mu_);
  // Forgets `id` (0, or one that expired already: nothing).
  void Cancel(Id id) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);
  // Ends the thread; nothing expires after it returns.
  void Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  std::function<void(const RoundWait&)> expire_;
  mutable Mutex mu_;
  CondVar wake_;
  bool stopped_ GUARDED_BY(mu_) = false;
  Id next_id_ GUARDED_BY(mu_) = 1;
  DeadlineQueue by_deadline_ GUARDED_BY(mu_);
  std::map<Id, std::pair<Clock::time_point, RoundWait>> waits_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace wattcut::server
