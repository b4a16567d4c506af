#include "wattcut/server/round_barrier.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace wattcut::server {
namespace {

using std::chrono::milliseconds;

// Until `n` ranks wait (bounded: at most 60,000 naps of 1 ms).
void WaitUntilWaiting(Mutex& mu, const RoundBarrier& barrier, size_t n) {
  for (int naps = 0; naps < 60000; ++naps) {
    {
      MutexLock lock(mu);
      if (barrier.num_waiting() == n) return;
    }
    std::this_thread::sleep_for(milliseconds(1));
  }
}

TEST(RoundBarrier, TheLastRankToJoinCompletesTheRound) {
  RoundBarrier barrier(3);
  EXPECT_FALSE(barrier.Join(0));
  EXPECT_FALSE(barrier.Join(2));
  EXPECT_EQ(barrier.num_waiting(), 2u);
  EXPECT_EQ(barrier.RanksNotWaiting(0, 16), std::vector<size_t>{1});
  EXPECT_TRUE(barrier.Join(1));
  barrier.Complete();
  EXPECT_EQ(barrier.completed_rounds(), 1);
  EXPECT_EQ(barrier.num_waiting(), 0u);
  EXPECT_FALSE(barrier.is_waiting(0));
}

TEST(RoundBarrier, JoiningTwiceCountsOnce) {
  RoundBarrier barrier(2);
  EXPECT_FALSE(barrier.Join(0));
  EXPECT_FALSE(barrier.Join(0));
  EXPECT_EQ(barrier.num_waiting(), 1u);
  barrier.Leave(0);
  barrier.Leave(0);
  EXPECT_EQ(barrier.num_waiting(), 0u);
}

TEST(RoundBarrier, ResumesFromTheStoredRound) {
  RoundBarrier barrier(1, 41);
  EXPECT_TRUE(barrier.Join(0));
  barrier.Complete();
  EXPECT_EQ(barrier.completed_rounds(), 42);
}

TEST(RoundBarrier, WaitersAreReleasedWhenTheLastRankArrives) {
  Mutex mu;
  RoundBarrier barrier(4);
  std::vector<int> served(3, -1);
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < 3; ++r) {
    ranks.emplace_back([&, r] {
      MutexLock lock(mu);
      barrier.Join(r);
      served[r] = barrier.Wait(mu, 0, milliseconds(60000), [] { return false; }) ? 1 : 0;
    });
  }
  // The fourth rank joins once the other three wait.
  WaitUntilWaiting(mu, barrier, 3);
  {
    MutexLock lock(mu);
    ASSERT_EQ(barrier.num_waiting(), 3u);
    ASSERT_TRUE(barrier.Join(3));
    barrier.Complete();
  }
  for (auto& t : ranks) t.join();
  EXPECT_EQ(served, (std::vector<int>{1, 1, 1}));
}

TEST(RoundBarrier, AWaitTimesOutWhenARankNeverAsks) {
  Mutex mu;
  RoundBarrier barrier(2);
  MutexLock lock(mu);
  barrier.Join(0);
  EXPECT_FALSE(barrier.Wait(mu, 0, milliseconds(20), [] { return false; }));
  barrier.Leave(0);
  EXPECT_EQ(barrier.RanksNotWaiting(0, 16), std::vector<size_t>{1});
  EXPECT_EQ(barrier.completed_rounds(), 0);
}

TEST(RoundBarrier, AStopWakesTheWaiters) {
  Mutex mu;
  RoundBarrier barrier(2);
  bool stopped = false;
  int result = -1;
  std::thread waiter([&] {
    MutexLock lock(mu);
    barrier.Join(0);
    result = barrier.Wait(mu, 0, milliseconds(600000), [&] { return stopped; }) ? 1 : 0;
  });
  WaitUntilWaiting(mu, barrier, 1);
  {
    MutexLock lock(mu);
    stopped = true;
    barrier.NotifyAll();
  }
  waiter.join();
  EXPECT_EQ(result, 0);
}

TEST(RoundBarrier, ListsAtMostTheLimit) {
  RoundBarrier barrier(40);
  EXPECT_EQ(barrier.RanksNotWaiting(3, 16).size(), 16u);
  EXPECT_EQ(barrier.RanksNotWaiting(3, 16).front(), 0u);
  EXPECT_EQ(barrier.RanksNotWaiting(0, 16).front(), 1u);
}

}  // namespace
}  // namespace wattcut::server
