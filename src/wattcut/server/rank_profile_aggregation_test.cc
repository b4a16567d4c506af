#include "wattcut/server/rank_profile_aggregation.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

RankProfile Rank(int rank, int pp, int tp, double scale) {
  RankProfile p;
  p.rank = rank;
  p.pp_rank = pp;
  p.tp_rank = tp;
  for (int f : {1410, 900}) {
    p.forward_time[f] = scale * 1410.0 / f;
    p.forward_energy[f] = scale * 100;
    p.backward_time[f] = 2 * scale * 1410.0 / f;
    p.backward_energy[f] = 2 * scale * 100;
  }
  return p;
}

TEST(RankProfileAggregation, TensorParallelRanksTakeTheMaxTimeAndTheSummedEnergy) {
  auto profile = AggregateRankProfiles({Rank(0, 0, 0, 1.0), Rank(1, 0, 1, 1.5)}, 1);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const auto& forward = profile->profile.measurements(0, InstructionKind::kForward);
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_EQ(forward[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(forward[0].time_s, 1.5);
  EXPECT_DOUBLE_EQ(forward[0].energy_j, 250);
  EXPECT_TRUE(profile->dropped.empty());
}

TEST(RankProfileAggregation, AFrequencyOneRankLacksIsLeftOutAndReported) {
  RankProfile lacking = Rank(1, 0, 1, 1.0);
  lacking.forward_time.erase(1410);
  auto profile = AggregateRankProfiles({Rank(0, 0, 0, 1.0), lacking}, 1);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->profile.measurements(0, InstructionKind::kForward).size(), 1u);
  EXPECT_EQ(profile->profile.measurements(0, InstructionKind::kForward)[0].freq_mhz, 900);
  EXPECT_EQ(profile->profile.measurements(0, InstructionKind::kBackward).size(), 2u);
  ASSERT_EQ(profile->dropped.size(), 1u);
  EXPECT_EQ(profile->dropped[0].freq_mhz, 1410);
  EXPECT_EQ(profile->dropped[0].missing_ranks, (std::vector<RankId>{RankId{1, 0, 1}}));
}

TEST(RankProfileAggregation, AnEnergyWithoutItsTimeDoesNotCountAsMeasured) {
  RankProfile half = Rank(1, 0, 1, 1.0);
  half.backward_energy.erase(900);
  auto profile = AggregateRankProfiles({Rank(0, 0, 0, 1.0), half}, 1);
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->profile.measurements(0, InstructionKind::kBackward).size(), 1u);
}

TEST(RankProfileAggregation, AStageOutsideThePipelineIsRefused) {
  auto refused = AggregateRankProfiles({Rank(0, 0, 0, 1.0), Rank(1, 2, 0, 1.0)}, 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "rank 1: pp_rank 2 >= pp_degree 2");
  EXPECT_FALSE(AggregateRankProfiles({Rank(0, 0, 0, 1.0)}, 2).ok());  // stage 1 has nothing
}

}  // namespace
}  // namespace wattcut::server
