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

// A zero-bubble rank that measured B and W at a 40:60 ratio: the stage keeps them as its
// backward_input and backward_weight rows (aggregated by the same rule), not halves of a
// backward, and its backward is B + W.
RankProfile SplitRank(int rank, int tp, double scale) {
  RankProfile p = Rank(rank, 0, tp, scale);
  for (auto& [f, time_s] : p.backward_time) {
    p.backward_input_time[f] = 0.4 * time_s;
    p.backward_weight_time[f] = 0.6 * time_s;
    p.backward_input_energy[f] = 0.4 * p.backward_energy.at(f);
    p.backward_weight_energy[f] = 0.6 * p.backward_energy.at(f);
  }
  p.backward_time.clear();
  p.backward_energy.clear();
  return p;
}

TEST(RankProfileAggregation, AMeasuredSplitBackwardKeepsItsRatio) {
  auto profile = AggregateRankProfiles({SplitRank(0, 0, 1.0), SplitRank(1, 1, 1.5)}, 1);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const auto& input = profile->profile.measurements(0, InstructionKind::kBackwardInput);
  const auto& weight = profile->profile.measurements(0, InstructionKind::kBackwardWeight);
  const auto& backward = profile->profile.measurements(0, InstructionKind::kBackward);
  ASSERT_EQ(input.size(), 2u);
  ASSERT_EQ(weight.size(), 2u);
  ASSERT_EQ(backward.size(), 2u);
  EXPECT_EQ(input[0].freq_mhz, 1410);
  EXPECT_EQ(weight[1].freq_mhz, 900);
  // The slower tp rank's time, both ranks' energy: 40 % and 60 % of the backward's.
  EXPECT_DOUBLE_EQ(input[0].time_s, 0.4 * 3.0);
  EXPECT_DOUBLE_EQ(weight[0].time_s, 0.6 * 3.0);
  EXPECT_DOUBLE_EQ(input[0].energy_j, 0.4 * 500);
  EXPECT_DOUBLE_EQ(weight[0].energy_j, 0.6 * 500);
  EXPECT_DOUBLE_EQ(weight[1].time_s, 0.6 * 3.0 * 1410.0 / 900);
  EXPECT_DOUBLE_EQ(backward[0].time_s, 3.0);  // B + W
  EXPECT_DOUBLE_EQ(backward[0].energy_j, 500);
  EXPECT_TRUE(profile->dropped.empty());
}

TEST(RankProfileAggregation, AWholeBackwardSentWithTheSplitIsKept) {
  RankProfile both = SplitRank(0, 0, 1.0);
  both.backward_time = {{1410, 2.5}, {900, 4.0}};
  both.backward_energy = {{1410, 210}, {900, 190}};
  auto profile = AggregateRankProfiles({both}, 1);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_DOUBLE_EQ(profile->profile.measurements(0, InstructionKind::kBackward)[0].time_s, 2.5);
  EXPECT_DOUBLE_EQ(profile->profile.measurements(0, InstructionKind::kBackwardInput)[0].time_s, 0.4 * 2);
}

TEST(RankProfileAggregation, ASplitSomeRanksOfAStageLackIsAnError) {
  auto refused = AggregateRankProfiles({SplitRank(0, 0, 1.0), Rank(1, 0, 1, 1.0)}, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "stage 0 has no 'backward_input' frequency that every rank of the stage measured (2 frequencies left "
            "out; the first: stage 0 backward_input 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not "
            "measure it (1 of 2 ranks of the stage); a frequency is used only where every rank of the stage "
            "measured it)");
}

}  // namespace
}  // namespace wattcut::server
