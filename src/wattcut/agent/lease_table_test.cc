#include "wattcut/agent/lease_table.h"

#include <gtest/gtest.h>

namespace wattcut::agent {
namespace {

const LeaseHolder kTrainer = LeaseHolder::Process(4242, 1000);
const LeaseHolder kOther = LeaseHolder::Process(5151, 1001);

TEST(LeaseTable, AGpuHasOneHolderAndAConflictNamesIt) {
  LeaseTable table(4);
  auto lease = table.Acquire(kTrainer, {0, 1}, 10, 0);
  ASSERT_TRUE(lease.ok()) << lease.error().message;
  EXPECT_EQ(table.LeaseOf(0)->id, lease->id);
  auto second = table.Acquire(kOther, {1, 2}, 10, 0);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kConflict);
  EXPECT_EQ(second.error().message, "GPU 1 is leased by pid 4242 (uid 1000)");
  EXPECT_EQ(table.LeaseOf(2), nullptr) << "a refused lease takes nothing";
  auto again = table.Acquire(kTrainer, {1}, 10, 0);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already in your lease " + std::to_string(lease->id)), std::string::npos);
}

TEST(LeaseTable, UnknownGpuIsNotFound) {
  LeaseTable table(2);
  auto lease = table.Acquire(kTrainer, {2}, 10, 0);
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(lease.error().message, "GPU 2 does not exist (2 GPUs)");
  EXPECT_EQ(table.CheckHolds(kTrainer, -1).error().code, ErrorCode::kNotFound);
}

TEST(LeaseTable, OnlyTheHolderMayLockRenewOrRelease) {
  LeaseTable table(2);
  auto lease = table.Acquire(kTrainer, {0}, 10, 0);
  ASSERT_TRUE(lease.ok());
  EXPECT_TRUE(table.CheckHolds(kTrainer, 0).ok());
  EXPECT_EQ(table.CheckHolds(kOther, 0).error().message, "GPU 0 is leased by pid 4242 (uid 1000)");
  EXPECT_EQ(table.CheckHolds(kOther, 0).error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(table.CheckHolds(kTrainer, 1).error().message.find("lease it first"), std::string::npos);
  EXPECT_EQ(table.Renew(lease->id, kOther, 1).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(table.Release(lease->id, kOther).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(table.Renew(lease->id + 7, kTrainer, 1).error().code, ErrorCode::kNotFound);
  auto released = table.Release(lease->id, kTrainer);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(released->reason, LeaseEnd::kReleased);
  EXPECT_EQ(table.LeaseOf(0), nullptr);
  EXPECT_TRUE(table.Acquire(kOther, {0}, 10, 2).ok()) << "a released GPU can be leased again";
}

TEST(LeaseTable, ALeaseNotRenewedWithinItsTtlEnds) {
  LeaseTable table(1);
  auto lease = table.Acquire(kTrainer, {0}, 3, 100);
  ASSERT_TRUE(lease.ok());
  auto alive = [](const LeaseHolder&) { return true; };
  EXPECT_TRUE(table.EndLeases(102.9, alive).empty());
  ASSERT_TRUE(table.Renew(lease->id, kTrainer, 102.9).ok());
  EXPECT_TRUE(table.EndLeases(105.8, alive).empty()) << "renewed at 102.9: good until 105.9";
  auto ended = table.EndLeases(105.9, alive);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].reason, LeaseEnd::kExpired);
  EXPECT_EQ(table.LeaseOf(0), nullptr);
}

TEST(LeaseTable, AHolderThatIsGoneLosesItsLeasesAtOnce) {
  LeaseTable table(3);
  ASSERT_TRUE(table.Acquire(kTrainer, {0, 1}, 3600, 0).ok());
  ASSERT_TRUE(table.Acquire(kOther, {2}, 3600, 0).ok());
  auto ended = table.EndLeases(1, [](const LeaseHolder& h) { return h.pid != 4242; });
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].reason, LeaseEnd::kHolderExited);
  EXPECT_EQ(ended[0].lease.gpus, (std::vector<int>{0, 1}));
  EXPECT_NE(table.LeaseOf(2), nullptr);
}

TEST(LeaseTable, ATcpLeaseIsTheTokenOnItsConnection) {
  LeaseTable table(2);
  const LeaseHolder row = LeaseHolder::Connection(3, 17, "10.0.0.5");
  ASSERT_TRUE(table.Acquire(row, {0}, 60, 0).ok());
  EXPECT_FALSE(table.CheckHolds(LeaseHolder::Connection(3, 18, "10.0.0.5"), 0).ok())
      << "the same token on another connection is another holder";
  EXPECT_EQ(table.CheckHolds(LeaseHolder::Connection(3, 18, "x"), 0).error().message,
            "GPU 0 is leased by the token of line 3 on connection 17 from 10.0.0.5");
  EXPECT_TRUE(table.EndConnection(18).empty());
  auto ended = table.EndConnection(17);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].reason, LeaseEnd::kConnectionClosed);
  EXPECT_STREQ(LeaseEndName(ended[0].reason), "connection_closed");
}

TEST(LeaseTable, EndAllEndsEveryLease) {
  LeaseTable table(2);
  ASSERT_TRUE(table.Acquire(kTrainer, {0}, 10, 0).ok());
  ASSERT_TRUE(table.Acquire(kOther, {1}, 10, 0).ok());
  EXPECT_EQ(table.EndAll().size(), 2u);
  EXPECT_TRUE(table.Leases().empty());
}

}  // namespace
}  // namespace wattcut::agent
