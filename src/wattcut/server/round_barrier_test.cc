#include "wattcut/server/round_barrier.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace wattcut::server {
namespace {

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

// A waiter whose reply records what it was answered in `answers[rank]`.
RoundWaiter Recording(RoundBarrier& barrier, std::vector<std::string>& answers, size_t rank) {
  RoundWaiter waiter;
  waiter.id = barrier.NextWaiterId();
  waiter.reply = [&answers, rank](Result<std::string> answer) { answers[rank] = answer ? *answer : "error"; };
  return waiter;
}

TEST(RoundBarrier, TheCompletedRoundsWaitersAreTakenToBeAnswered) {
  RoundBarrier barrier(4);
  std::vector<std::string> answers(4);
  for (size_t r = 0; r < 3; ++r) {
    ASSERT_FALSE(barrier.Join(r));
    barrier.Park(r, Recording(barrier, answers, r));
  }
  ASSERT_TRUE(barrier.Join(3));  // the last rank: answered by its own request
  barrier.Complete();
  EXPECT_EQ(barrier.completed_rounds(), 1);
  auto waiters = barrier.TakeWaiters();
  ASSERT_EQ(waiters.size(), 3u);
  for (auto& [rank, waiter] : waiters) waiter.reply("round 1 for " + std::to_string(rank));
  EXPECT_EQ(answers, (std::vector<std::string>{"round 1 for 0", "round 1 for 1", "round 1 for 2", ""}));
  EXPECT_TRUE(barrier.TakeWaiters().empty());
  EXPECT_EQ(barrier.num_waiting(), 0u);
}

TEST(RoundBarrier, ALeaveEndsOnlyTheWaitItNames) {
  RoundBarrier barrier(2);
  std::vector<std::string> answers(2);
  barrier.Join(0);
  RoundWaiter first = Recording(barrier, answers, 0);
  const uint64_t first_id = first.id;
  barrier.Park(0, std::move(first));
  EXPECT_FALSE(barrier.Leave(0, first_id + 1).has_value());  // another wait's deadline
  EXPECT_TRUE(barrier.is_waiting(0));
  auto left = barrier.Leave(0, first_id);  // its own: the rank leaves, the waiter is handed back
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->id, first_id);
  EXPECT_FALSE(barrier.is_waiting(0));
  EXPECT_FALSE(barrier.Leave(0, first_id).has_value());  // ended once
  EXPECT_EQ(barrier.RanksNotWaiting(0, 16), std::vector<size_t>{1});
  EXPECT_EQ(barrier.completed_rounds(), 0);
}

TEST(RoundBarrier, EveryWaitEndsWithoutTheRound) {
  // A deleted job or a stopping server: every waiter is taken, the round is not counted.
  RoundBarrier barrier(3);
  std::vector<std::string> answers(3);
  for (size_t r = 0; r < 2; ++r) {
    barrier.Join(r);
    barrier.Park(r, Recording(barrier, answers, r));
  }
  EXPECT_EQ(barrier.TakeWaiters().size(), 2u);
  EXPECT_EQ(barrier.num_waiting(), 0u);
  EXPECT_EQ(barrier.completed_rounds(), 0);
}

TEST(RoundBarrier, ListsAtMostTheLimit) {
  RoundBarrier barrier(40);
  EXPECT_EQ(barrier.RanksNotWaiting(3, 16).size(), 16u);
  EXPECT_EQ(barrier.RanksNotWaiting(3, 16).front(), 0u);
  EXPECT_EQ(barrier.RanksNotWaiting(0, 16).front(), 1u);
}

}  // namespace
}  // namespace wattcut::server
