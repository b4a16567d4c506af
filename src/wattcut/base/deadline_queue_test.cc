#include "wattcut/base/deadline_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace wattcut {
namespace {

using Clock = DeadlineQueue::Clock;
using std::chrono::milliseconds;

TEST(DeadlineQueue, TakesWhatIsDueEarliestFirstAndLeavesTheRest) {
  DeadlineQueue queue;
  const Clock::time_point now = Clock::now();
  queue.Add(now + milliseconds(2), 7);
  queue.Add(now - milliseconds(5), 3);
  queue.Add(now, 9);
  queue.Add(now + std::chrono::hours(1), 1);
  EXPECT_TRUE(queue.IsEarliest(now - milliseconds(6)));
  EXPECT_FALSE(queue.IsEarliest(now));
  EXPECT_EQ(queue.TakeDue(now), (std::vector<DeadlineQueue::Id>{3, 9}));
  EXPECT_EQ(queue.TakeDue(now + milliseconds(2)), std::vector<DeadlineQueue::Id>{7});
  EXPECT_TRUE(queue.Remove(now + std::chrono::hours(1), 1));
  EXPECT_FALSE(queue.Remove(now + std::chrono::hours(1), 1));
  EXPECT_TRUE(queue.empty());
}

TEST(DeadlineQueue, WaitsUntilTheEarliestIsDue) {
  DeadlineQueue queue;
  Mutex mu;
  CondVar wake;
  const Clock::time_point due = Clock::now() + milliseconds(20);
  queue.Add(due, 1);
  MutexLock lock(mu);
  // A wake-up may come early (spurious): wait again until it is due (bounded: 1,000 waits).
  for (int waits = 0; waits < 1000 && queue.TakeDue(Clock::now()).empty(); ++waits) queue.WaitForNext(mu, wake);
  EXPECT_GE(Clock::now(), due);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace wattcut
