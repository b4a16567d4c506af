#include "wattcut/server/long_poll_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace wattcut::server {
namespace {

using std::chrono::milliseconds;

// What expired, in order.
struct Expired {
  std::mutex mu;
  std::vector<uint64_t> waiter_ids;

  size_t Count() {
    std::lock_guard lock(mu);
    return waiter_ids.size();
  }
  // Until `n` have expired (bounded: 10,000 naps of 1 ms).
  void WaitFor(size_t n) {
    for (int nap = 0; nap < 10000 && Count() < n; ++nap) std::this_thread::sleep_for(milliseconds(1));
  }
  // What a timer calls with each wait that expires.
  std::function<void(const RoundWait&)> Recorder() {
    return [this](const RoundWait& wait) {
      std::lock_guard lock(mu);
      waiter_ids.push_back(wait.waiter_id);
    };
  }
};

TEST(LongPollTimer, DeadlinesExpireInTheirOrderAndACancelledOneNever) {
  Expired expired;
  LongPollTimer timer(expired.Recorder());
  const auto now = LongPollTimer::Clock::now();
  timer.Add(now + milliseconds(30), RoundWait{"job", 0, 3});
  const LongPollTimer::Id cancelled = timer.Add(now + milliseconds(10), RoundWait{"job", 1, 2});
  timer.Add(now + milliseconds(20), RoundWait{"job", 2, 1});
  EXPECT_EQ(timer.size(), 3u);
  timer.Cancel(cancelled);
  timer.Cancel(cancelled);  // twice: nothing
  timer.Cancel(0);
  expired.WaitFor(2);
  EXPECT_EQ(expired.waiter_ids, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(timer.size(), 0u);
}

TEST(LongPollTimer, AnEarlierDeadlineAddedLaterWakesTheTimer) {
  Expired expired;
  LongPollTimer timer(expired.Recorder());
  timer.Add(LongPollTimer::Clock::now() + std::chrono::hours(1), RoundWait{"job", 0, 1});
  timer.Add(LongPollTimer::Clock::now(), RoundWait{"job", 1, 2});
  expired.WaitFor(1);
  EXPECT_EQ(expired.waiter_ids, std::vector<uint64_t>{2});
  EXPECT_EQ(timer.size(), 1u);
}

TEST(LongPollTimer, NothingExpiresAfterStop) {
  Expired expired;
  LongPollTimer timer(expired.Recorder());
  timer.Add(LongPollTimer::Clock::now() + milliseconds(20), RoundWait{"job", 0, 1});
  timer.Stop();
  EXPECT_EQ(timer.Add(LongPollTimer::Clock::now(), RoundWait{"job", 1, 2}), 0u);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(expired.Count(), 0u);
  timer.Stop();  // twice: nothing
}

}  // namespace
}  // namespace wattcut::server
