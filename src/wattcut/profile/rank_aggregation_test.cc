#include "wattcut/profile/rank_aggregation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "wattcut/profile/instruction_letters_testing.h"
#include "wattcut/profile/rank_measurements_testing.h"

namespace wattcut {
namespace {

using namespace instruction_letters;
using testing::RankEnergy;
using testing::RankTime;

// Every rank of `stages` stages x dp x tp, forward and backward at `freqs`.
std::vector<RankMeasurement> Complete(int stages, int dp_degree, int tp_degree, const std::vector<int>& freqs) {
  std::vector<RankMeasurement> out;
  for (int s = 0; s < stages; ++s) {
    for (int dp = 0; dp < dp_degree; ++dp) {
      for (int tp = 0; tp < tp_degree; ++tp) {
        for (InstructionKind kind : {F, B}) {
          for (int f : freqs) {
            RankId rank{(dp * stages + s) * tp_degree + tp, dp, tp};
            out.push_back({s, kind, f, rank, RankTime(dp, s, tp, kind, f), RankEnergy(dp, s, tp, kind, f)});
          }
        }
      }
    }
  }
  return out;
}

void Remove(std::vector<RankMeasurement>& list, int stage, InstructionKind kind, int freq, int dp, int tp) {
  auto it = std::find_if(list.begin(), list.end(), [&](const RankMeasurement& m) {
    return m.stage == stage && m.kind == kind && m.freq_mhz == freq && m.rank.dp_rank == dp && m.rank.tp_rank == tp;
  });
  ASSERT_NE(it, list.end());
  list.erase(it);
}

// The arithmetic the CSV reader always used: over tp (in tp order) the max time and the
// summed energy, then over dp (in dp order) the sum, divided by the number of replicas.
Measurement Expected(int stage, InstructionKind kind, int freq, int dp_degree, int tp_degree) {
  double time_sum = 0, energy_sum = 0;
  for (int dp = 0; dp < dp_degree; ++dp) {
    double time = 0, energy = 0;
    for (int tp = 0; tp < tp_degree; ++tp) {
      time = std::max(time, RankTime(dp, stage, tp, kind, freq));
      energy += RankEnergy(dp, stage, tp, kind, freq);
    }
    time_sum += time;
    energy_sum += energy;
  }
  return Measurement{freq, time_sum / dp_degree, energy_sum / dp_degree};
}

TEST(RankAggregationTest, CompleteDataIsMaxTimeSumEnergyOverTpThenMeanOverDpBitForBit) {
  constexpr int kStages = 2, kDp = 3, kTp = 4;
  const std::vector<int> freqs = {1410, 1200, 1005};
  std::vector<RankMeasurement> input = Complete(kStages, kDp, kTp, freqs);
  std::shuffle(input.begin(), input.end(), std::mt19937(7));  // the order does not matter
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, kStages);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->dropped.empty());
  ASSERT_EQ(out->profile.num_stages(), kStages);
  for (int s = 0; s < kStages; ++s) {
    for (InstructionKind kind : {F, B}) {
      const auto& list = out->profile.measurements(s, kind);
      ASSERT_EQ(list.size(), freqs.size());
      for (size_t i = 0; i < freqs.size(); ++i) {
        Measurement want = Expected(s, kind, freqs[i], kDp, kTp);
        EXPECT_EQ(list[i].freq_mhz, freqs[i]);  // descending
        EXPECT_EQ(list[i].time_s, want.time_s) << "stage " << s << " " << freqs[i];
        EXPECT_EQ(list[i].energy_j, want.energy_j) << "stage " << s << " " << freqs[i];
      }
    }
  }
}

TEST(RankAggregationTest, OneRankPerStageIsTheMeasurementItself) {
  std::vector<RankMeasurement> input = {
      {0, F, 1410, {}, 0.1, 20}, {0, B, 1410, {}, 0.2, 40}, {0, F, 1200, {}, 0.12, 18}, {0, B, 1200, {}, 0.24, 36}};
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, 1);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->dropped.empty());
  ASSERT_EQ(out->profile.measurements(0, F).size(), 2u);
  EXPECT_EQ(out->profile.measurements(0, F)[1].freq_mhz, 1200);
  EXPECT_EQ(out->profile.measurements(0, F)[1].time_s, 0.12);
  EXPECT_EQ(out->profile.measurements(0, F)[1].energy_j, 18);
}

TEST(RankAggregationTest, AFrequencyATpRankLacksIsDroppedAndReported) {
  constexpr int kDp = 1, kTp = 2;
  std::vector<RankMeasurement> input = Complete(2, kDp, kTp, {1410, 1200});
  Remove(input, 0, F, 1410, 0, 1);
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, 2);
  ASSERT_TRUE(out.ok()) << out.error().message;
  // Only 1200 MHz is left for stage 0 forward; everything else is complete.
  ASSERT_EQ(out->profile.measurements(0, F).size(), 1u);
  EXPECT_EQ(out->profile.measurements(0, F)[0].freq_mhz, 1200);
  EXPECT_EQ(out->profile.measurements(0, F)[0].energy_j, Expected(0, F, 1200, kDp, kTp).energy_j);
  EXPECT_EQ(out->profile.measurements(0, B).size(), 2u);
  EXPECT_EQ(out->profile.measurements(1, F).size(), 2u);
  ASSERT_EQ(out->dropped.size(), 1u);
  const DroppedFrequency& d = out->dropped[0];
  EXPECT_EQ(d.stage, 0);
  EXPECT_EQ(d.kind, F);
  EXPECT_EQ(d.freq_mhz, 1410);
  EXPECT_EQ(d.num_ranks, 2);
  ASSERT_EQ(d.missing_ranks.size(), 1u);
  EXPECT_EQ(d.missing_ranks[0], (RankId{1, 0, 1}));  // rank (dp*2+stage)*2+tp = 1
  EXPECT_EQ(DroppedFrequencyMessage(d),
            "stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not measure it (1 of 2 ranks "
            "of the stage); a frequency is used only where every rank of the stage measured it");
}

TEST(RankAggregationTest, TheResultEqualsTheProfileWithTheMeasurementRemovedForEveryRank) {
  std::vector<RankMeasurement> partial = Complete(1, 2, 2, {1410, 1300, 1200});
  Remove(partial, 0, B, 1300, 1, 0);
  std::vector<RankMeasurement> reduced = Complete(1, 2, 2, {1410, 1300, 1200});
  for (int dp = 0; dp < 2; ++dp) {
    for (int tp = 0; tp < 2; ++tp) Remove(reduced, 0, B, 1300, dp, tp);
  }
  Result<AggregatedProfile> a = AggregateRankMeasurements(partial, 1);
  Result<AggregatedProfile> b = AggregateRankMeasurements(reduced, 1);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->dropped.size(), 1u);
  EXPECT_TRUE(b->dropped.empty());
  for (InstructionKind kind : {F, B}) {
    const auto& x = a->profile.measurements(0, kind);
    const auto& y = b->profile.measurements(0, kind);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].freq_mhz, y[i].freq_mhz);
      EXPECT_EQ(x[i].time_s, y[i].time_s);
      EXPECT_EQ(x[i].energy_j, y[i].energy_j);
    }
  }
}

TEST(RankAggregationTest, AFrequencyNoRankMeasuredIsSimplyAbsent) {
  // Stage 1 is measured at 1410 and 1200 MHz, stage 0 by none of its ranks at 1200: nothing to drop.
  std::vector<RankMeasurement> input = Complete(1, 2, 2, {1410});
  for (RankMeasurement m : Complete(2, 2, 2, {1200})) {
    if (m.stage == 1) input.push_back(m);
  }
  for (RankMeasurement m : Complete(2, 2, 2, {1410})) {
    if (m.stage == 1) input.push_back(m);
  }
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, 2);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_TRUE(out->dropped.empty());
  EXPECT_EQ(out->profile.measurements(0, F).size(), 1u);
  EXPECT_EQ(out->profile.measurements(1, F).size(), 2u);
}

TEST(RankAggregationTest, DpReplicasAreAveragedAndAMissingDpRankDropsTheFrequency) {
  // dp = 2, tp = 1: dp 0 (0.1 s, 10 J), dp 1 (0.3 s, 30 J) at 1410; dp 1 lacks 1200.
  std::vector<RankMeasurement> input = {
      {0, F, 1410, {0, 0, 0}, 0.1, 10}, {0, F, 1410, {1, 1, 0}, 0.3, 30}, {0, F, 1200, {0, 0, 0}, 0.2, 5},
      {0, B, 1410, {0, 0, 0}, 0.2, 20}, {0, B, 1410, {1, 1, 0}, 0.4, 40},
  };
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, 1);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->profile.measurements(0, F).size(), 1u);
  EXPECT_DOUBLE_EQ(out->profile.measurements(0, F)[0].time_s, 0.2);
  EXPECT_DOUBLE_EQ(out->profile.measurements(0, F)[0].energy_j, 20);
  EXPECT_DOUBLE_EQ(out->profile.measurements(0, B)[0].time_s, 0.3);
  ASSERT_EQ(out->dropped.size(), 1u);
  EXPECT_EQ(out->dropped[0].freq_mhz, 1200);
  EXPECT_EQ(out->dropped[0].missing_ranks, (std::vector<RankId>{{1, 1, 0}}));
}

TEST(RankAggregationTest, ARankWithoutAnyBackwardLeavesNoBackwardFrequency) {
  std::vector<RankMeasurement> input = Complete(1, 1, 2, {1410, 1200});
  Remove(input, 0, B, 1410, 0, 1);
  Remove(input, 0, B, 1200, 0, 1);
  Result<AggregatedProfile> out = AggregateRankMeasurements(input, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            "stage 0 has no 'backward' frequency that every rank of the stage measured (2 frequencies left out; "
            "the first: stage 0 backward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not measure it "
            "(1 of 2 ranks of the stage); a frequency is used only where every rank of the stage measured it)");
}

TEST(RankAggregationTest, RefusesMissingStagesDuplicatesAndStagesOutOfRange) {
  std::vector<RankMeasurement> one_stage = Complete(1, 1, 1, {1410});
  Result<AggregatedProfile> missing = AggregateRankMeasurements(one_stage, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "stage 1 has no 'forward' measurements (expected every stage 0..1 to have forward and backward rows)");

  std::vector<RankMeasurement> twice = one_stage;
  twice.push_back(twice[0]);
  Result<AggregatedProfile> duplicate = AggregateRankMeasurements(twice, 1);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().message, "stage 0 forward 1410 MHz: rank 0 (dp_rank 0, tp_rank 0) has two measurements");

  Result<AggregatedProfile> outside = AggregateRankMeasurements(Complete(2, 1, 1, {1410}), 1);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().message, "stage 1 of rank 1 (dp_rank 0, tp_rank 0) is outside the pipeline's stages 0..0");
}

TEST(RankAggregationTest, TheMessageNamesAtMostEightRanks) {
  DroppedFrequency d{2, B, 990, {}, 16};
  for (int tp = 1; tp < 11; ++tp) d.missing_ranks.push_back(RankId{-1, 0, tp});
  EXPECT_EQ(DroppedFrequencyMessage(d),
            "stage 2 backward 990 MHz is not used: (dp_rank 0, tp_rank 1), (dp_rank 0, tp_rank 2), (dp_rank 0, "
            "tp_rank 3), (dp_rank 0, tp_rank 4), (dp_rank 0, tp_rank 5), (dp_rank 0, tp_rank 6), (dp_rank 0, tp_rank "
            "7), (dp_rank 0, tp_rank 8) and 2 more did not measure it (10 of 16 ranks of the stage); a frequency is "
            "used only where every rank of the stage measured it");
}

}  // namespace
}  // namespace wattcut
