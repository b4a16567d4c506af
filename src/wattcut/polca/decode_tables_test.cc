#include "wattcut/polca/decode_tables.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace wattcut::polca {
namespace {

class DecodeTablesTest : public ::testing::Test {
 protected:
  DecodeTablesTest() : config_(*BuiltInConfig("a100")), model_(config_) {}
  PolcaConfig config_;
  InferencePowerModel model_;
};

TEST_F(DecodeTablesTest, StepsAreTheModelsNumbersBitForBit) {
  DecodeTables tables(model_, config_.service.max_batch);
  for (GpuLimits limits : {GpuLimits{1410, 0}, GpuLimits{1110, 0}, GpuLimits{1410, 250}, GpuLimits{900, 200}}) {
    DecodeTableLease lease(tables, limits);
    for (int b = 1; b <= config_.service.max_batch; ++b) {
      double f = limits.freq_mhz;
      if (limits.cap_w > 0) f = std::min(f, model_.TokenFreqUnderCap(b, limits.cap_w));
      EXPECT_EQ(lease.at(static_cast<size_t>(b)).iterations_per_s,
                1.0 / (model_.TokenIterationSeconds(b) * model_.TokenSlowdown(f)));
      EXPECT_EQ(lease.at(static_cast<size_t>(b)).server_w, model_.ServerTokenW(b, f));
    }
  }
}

TEST_F(DecodeTablesTest, ServersAtTheSameLimitsShareOneTable) {
  DecodeTables tables(model_, config_.service.max_batch);
  std::vector<DecodeTableLease> leases;
  for (int i = 0; i < 100; ++i) leases.emplace_back(tables, GpuLimits{1410, 0});
  EXPECT_EQ(tables.tables_computed(), 1);
  for (int i = 0; i < 50; ++i) leases[static_cast<size_t>(i)].Reset({1110, 0});  // a lock on half
  EXPECT_EQ(tables.tables_computed(), 2);
  EXPECT_EQ(tables.tables_in_use(), 2u);
  for (int i = 0; i < 50; ++i) leases[static_cast<size_t>(i)].Reset({1410, 0});  // released
  EXPECT_EQ(tables.tables_in_use(), 1u);
  for (int i = 0; i < 50; ++i) leases[static_cast<size_t>(i)].Reset({1110, 0});  // locked again: kept, not recomputed
  EXPECT_EQ(tables.tables_computed(), 2);
  leases.clear();
  EXPECT_EQ(tables.tables_in_use(), 0u);
}

TEST_F(DecodeTablesTest, IdleTablesAreBoundedAndReusedOldestFirst) {
  DecodeTables tables(model_, config_.service.max_batch);
  DecodeTableLease held(tables, {1410, 0});
  DecodeTableLease moving(tables, {1400, 0});
  // A lease walking over many distinct caps: the tables left behind are kept up to the bound,
  // then reused; the one another lease holds is never reused.
  for (int k = 0; k < 1000; ++k) {
    moving.Reset({1410, 100.0 + k});
    EXPECT_LE(tables.tables_kept(), DecodeTables::kMaxIdleTables + 3);
  }
  EXPECT_EQ(tables.tables_in_use(), 2u);
  EXPECT_EQ(held.at(1).server_w, model_.ServerTokenW(1, 1410));
  // The walk's last table is current.
  double f = std::min(1410.0, model_.TokenFreqUnderCap(5, 1099));
  EXPECT_EQ(moving.at(5).server_w, model_.ServerTokenW(5, f));
}

TEST_F(DecodeTablesTest, AMovedLeaseGivesItsTableBackOnce) {
  DecodeTables tables(model_, config_.service.max_batch);
  {
    DecodeTableLease a(tables, {1410, 0});
    DecodeTableLease b(std::move(a));
    EXPECT_EQ(tables.tables_in_use(), 1u);
    DecodeTableLease c(tables, {1000, 0});
    c = std::move(b);  // c's 1000 MHz table is given back, b's is now c's
    EXPECT_EQ(tables.tables_in_use(), 1u);
    EXPECT_EQ(c.at(1).server_w, model_.ServerTokenW(1, 1410));
  }
  EXPECT_EQ(tables.tables_in_use(), 0u);
}

}  // namespace
}  // namespace wattcut::polca
