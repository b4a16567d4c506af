#include "wattcut/profile/profile_csv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/profile/instruction_letters_testing.h"
#include "wattcut/profile/rank_measurements_testing.h"

namespace wattcut {
namespace {

using namespace instruction_letters;
using testing::RankEnergy;
using testing::RankTime;

const std::string kHeader = "stage,instruction,frequency,time,energy\n";
const std::string kExpectedColumns =
    "expected columns stage,instruction,frequency,time,energy (optionally preceded by "
    "rank,dp_rank,pp_rank,tp_rank and followed by samples,time_std,energy_std)";

// Two stages, one frequency each: a valid profile to append a bad row to.
const std::string kValidRows =
    "0,forward,1410,0.05,20\n"
    "0,backward,1410,0.1,40\n"
    "1,forward,1410,0.06,22\n"
    "1,backward,1410,0.12,44\n";

// The error message of parsing `text` as "p.csv"; fails the test if parsing succeeds.
std::string ErrorOf(const std::string& text, int expected_stages = 0) {
  Result<Profile> result = ParseProfileCsv(text, "p.csv", expected_stages);
  if (result.ok()) {
    ADD_FAILURE() << "expected an error for:\n" << text;
    return "";
  }
  return result.error().message;
}

// A file whose line 2 is `row` (5 fields in the basic layout), followed by the valid rows.
std::string WithBadRow(const std::string& row) { return kHeader + row + "\n" + kValidRows; }

// ---------------------------------------------------------------------------------------
// Accepted layouts.

TEST(ProfileCsvTest, ParsesBasicLayout) {
  const std::string text = kHeader +
                           "0,forward,1410,0.05,20\n"
                           "0,backward,1410,0.1,40\n"
                           "0,forward,1395,0.051,19.5\n"
                           "0,backward,1395,0.102,39\n"
                           "1,forward,1410,0.06,22\n"
                           "1,backward,1410,0.12,44\n"
                           "1,forward,1395,0.061,21.25\n"
                           "1,backward,1395,0.125,43\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), 2);

  const auto& f0 = profile->measurements(0, F);
  ASSERT_EQ(f0.size(), 2u);
  EXPECT_EQ(f0[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(f0[0].time_s, 0.05);
  EXPECT_DOUBLE_EQ(f0[0].energy_j, 20);
  EXPECT_EQ(f0[1].freq_mhz, 1395);
  EXPECT_DOUBLE_EQ(f0[1].time_s, 0.051);
  EXPECT_DOUBLE_EQ(f0[1].energy_j, 19.5);

  const auto& b1 = profile->measurements(1, B);
  ASSERT_EQ(b1.size(), 2u);
  EXPECT_EQ(b1[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(b1[0].time_s, 0.12);
  EXPECT_DOUBLE_EQ(b1[0].energy_j, 44);
  EXPECT_EQ(b1[1].freq_mhz, 1395);
  EXPECT_DOUBLE_EQ(b1[1].time_s, 0.125);
  EXPECT_DOUBLE_EQ(b1[1].energy_j, 43);

  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[1].energy_j, 39);
  EXPECT_DOUBLE_EQ(profile->measurements(1, F)[1].energy_j, 21.25);
}

TEST(ProfileCsvTest, SortsMeasurementsByFrequencyDescending) {
  // Rows in ascending and then mixed frequency order, stages interleaved.
  const std::string text = kHeader +
                           "0,forward,855,0.09,15\n"
                           "0,backward,870,0.18,31\n"
                           "0,forward,1410,0.05,20\n"
                           "0,backward,1410,0.1,40\n"
                           "0,forward,1005,0.07,16\n"
                           "0,backward,855,0.19,30\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), 1);
  std::vector<int> forward_freqs, backward_freqs;
  for (const Measurement& m : profile->measurements(0, F)) forward_freqs.push_back(m.freq_mhz);
  for (const Measurement& m : profile->measurements(0, B)) backward_freqs.push_back(m.freq_mhz);
  EXPECT_EQ(forward_freqs, (std::vector<int>{1410, 1005, 855}));
  EXPECT_EQ(backward_freqs, (std::vector<int>{1410, 870, 855}));
  // The values travel with their frequency.
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[1].time_s, 0.07);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[2].energy_j, 15);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[2].time_s, 0.19);
}

TEST(ProfileCsvTest, AcceptsColumnsInAnyOrderQuotesCrlfAndBlankLines) {
  const std::string text =
      "energy,time,frequency,instruction,stage\r\n"
      "\r\n"
      "20,0.05,1410,\"forward\",0\r\n"
      "40, 0.1 ,1410,backward,0\r\n"
      "\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), 1);
  ASSERT_EQ(profile->measurements(0, F).size(), 1u);
  EXPECT_EQ(profile->measurements(0, F)[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].time_s, 0.05);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].energy_j, 20);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].time_s, 0.1);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].energy_j, 40);
}

TEST(ProfileCsvTest, AcceptsIntegerFrequencyWrittenAsFloatAndZeroEnergy) {
  const std::string text = kHeader +
                           "0,forward,1410.0,0.05,0\n"
                           "0,backward,1410,0.1,40\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->measurements(0, F)[0].freq_mhz, 1410);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].energy_j, 0);
}

TEST(ProfileCsvTest, AcceptsFrequencyRangeBounds) {
  const std::string text = kHeader +
                           "0,forward,1,0.05,20\n"
                           "0,backward,100000,0.1,40\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->measurements(0, F)[0].freq_mhz, 1);
  EXPECT_EQ(profile->measurements(0, B)[0].freq_mhz, 100000);
}

TEST(ProfileCsvTest, AcceptsOptionalStatisticsColumns) {
  const std::string text =
      "stage,instruction,frequency,time,energy,samples,time_std,energy_std\n"
      "0,forward,1410,0.05,20,30,0.001,0.5\n"
      "0,backward,1410,0.1,40,30,0,0\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), 1);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].time_s, 0.05);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].energy_j, 20);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].time_s, 0.1);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].energy_j, 40);

  // A subset of them is fine too.
  Result<Profile> subset = ParseProfileCsv(
      "stage,instruction,frequency,time,energy,samples\n0,forward,1410,0.05,20,3\n0,backward,1410,0.1,40,3\n", "p.csv");
  EXPECT_TRUE(subset.ok()) << subset.error().message;
}

TEST(ProfileCsvTest, StatisticsColumnsAreStillValidated) {
  const std::string header = "stage,instruction,frequency,time,energy,samples,time_std,energy_std\n";
  EXPECT_EQ(ErrorOf(header + "0,forward,1410,0.05,20,30,-0.1,0.5\n0,backward,1410,0.1,40,30,0,0\n"),
            "p.csv:2: column 'time_std': expected a value >= 0, got -0.1");
  EXPECT_EQ(ErrorOf(header + "0,forward,1410,0.05,20,many,0.1,0.5\n0,backward,1410,0.1,40,30,0,0\n"),
            "p.csv:2: column 'samples': expected a number, got 'many'");
  EXPECT_EQ(ErrorOf(header + "0,forward,1410,0.05,20,30,0.1,nan\n0,backward,1410,0.1,40,30,0,0\n"),
            "p.csv:2: column 'energy_std': expected a finite number, got 'nan'");
}

TEST(ProfileCsvTest, InfersStagesOrUsesExpectedStages) {
  Result<Profile> inferred = ParseProfileCsv(kHeader + kValidRows, "p.csv");
  ASSERT_TRUE(inferred.ok()) << inferred.error().message;
  EXPECT_EQ(inferred->num_stages(), 2);
  Result<Profile> given = ParseProfileCsv(kHeader + kValidRows, "p.csv", 2);
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_EQ(given->num_stages(), 2);
}

// ---------------------------------------------------------------------------------------
// The per-rank (Merak/Zeus) layout.

TEST(ProfileCsvTest, PerRankLayoutAggregatesMaxTimeSumEnergyOverTpThenMeanOverDp) {
  constexpr int kDp = 2, kPp = 2, kTp = 3;
  const std::vector<int> freqs = {1410, 1200};
  std::ostringstream text;
  text << "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n";
  text.precision(17);
  for (int freq : freqs) {
    for (InstructionKind kind : {F, B}) {
      for (int dp = 0; dp < kDp; ++dp) {
        for (int pp = 0; pp < kPp; ++pp) {
          for (int tp = 0; tp < kTp; ++tp) {
            text << (dp * kPp + pp) * kTp + tp << ',' << dp << ',' << pp << ',' << tp << ',' << pp << ','
                 << InstructionName(kind) << ',' << freq << ',' << RankTime(dp, pp, tp, kind, freq) << ','
                 << RankEnergy(dp, pp, tp, kind, freq) << '\n';
          }
        }
      }
    }
  }
  Result<Profile> profile = ParseProfileCsv(text.str(), "ranks.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), kPp);
  for (int pp = 0; pp < kPp; ++pp) {
    for (InstructionKind kind : {F, B}) {
      const auto& list = profile->measurements(pp, kind);
      ASSERT_EQ(list.size(), freqs.size());
      for (size_t i = 0; i < freqs.size(); ++i) {
        const int freq = freqs[i];
        double time_sum = 0, energy_sum = 0;
        for (int dp = 0; dp < kDp; ++dp) {
          double max_time = 0, sum_energy = 0;
          for (int tp = 0; tp < kTp; ++tp) {
            max_time = std::max(max_time, RankTime(dp, pp, tp, kind, freq));
            sum_energy += RankEnergy(dp, pp, tp, kind, freq);
          }
          time_sum += max_time;
          energy_sum += sum_energy;
        }
        EXPECT_EQ(list[i].freq_mhz, freq);
        EXPECT_NEAR(list[i].time_s, time_sum / kDp, 1e-12) << "stage " << pp << " freq " << freq;
        EXPECT_NEAR(list[i].energy_j, energy_sum / kDp, 1e-9) << "stage " << pp << " freq " << freq;
      }
    }
  }
}

TEST(ProfileCsvTest, PerRankLayoutSmallCaseByHand) {
  // One stage, dp=2, tp=2. Forward at 1410 MHz:
  //   dp 0: tp times 0.10, 0.12 -> 0.12; energies 10 + 11 = 21
  //   dp 1: tp times 0.11, 0.09 -> 0.11; energies 12 + 13 = 25
  //   mean over dp: time 0.115, energy 23.
  const std::string text =
      "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy,samples,time_std,energy_std\n"
      "0,0,0,0,0,forward,1410,0.10,10,5,0.001,0.1\n"
      "1,0,0,1,0,forward,1410,0.12,11,5,0.001,0.1\n"
      "2,1,0,0,0,forward,1410,0.11,12,5,0.001,0.1\n"
      "3,1,0,1,0,forward,1410,0.09,13,5,0.001,0.1\n"
      "0,0,0,0,0,backward,1410,0.2,30,5,0.001,0.1\n"
      "1,0,0,1,0,backward,1410,0.2,30,5,0.001,0.1\n"
      "2,1,0,0,0,backward,1410,0.3,40,5,0.001,0.1\n"
      "3,1,0,1,0,backward,1410,0.1,40,5,0.001,0.1\n";
  Result<Profile> profile = ParseProfileCsv(text, "p.csv");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->num_stages(), 1);
  ASSERT_EQ(profile->measurements(0, F).size(), 1u);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].time_s, 0.115);
  EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].energy_j, 23);
  // Backward: dp 0 -> (0.2, 60), dp 1 -> (0.3, 80); mean (0.25, 70).
  ASSERT_EQ(profile->measurements(0, B).size(), 1u);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].time_s, 0.25);
  EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].energy_j, 70);
}

TEST(ProfileCsvTest, PerRankLayoutLeavesOutAFrequencyATpRankLacksAndSaysSo) {
  // tp rank 1 has no forward at 1410 MHz: summed over tp rank 0 alone it would look half as costly.
  const std::string header = "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n";
  const std::string rows =
      "0,0,0,0,0,forward,1200,0.12,9\n"
      "1,0,0,1,0,forward,1200,0.12,9\n"
      "0,0,0,0,0,backward,1410,0.2,20\n"
      "1,0,0,1,0,backward,1410,0.2,20\n";
  Result<AggregatedProfile> partial =
      ParseProfileCsvWithWarnings(header + "0,0,0,0,0,forward,1410,0.1,10\n" + rows, "p.csv");
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  ASSERT_EQ(partial->profile.measurements(0, F).size(), 1u);
  EXPECT_EQ(partial->profile.measurements(0, F)[0].freq_mhz, 1200);
  EXPECT_EQ(partial->profile.measurements(0, F)[0].energy_j, 18);
  ASSERT_EQ(partial->dropped.size(), 1u);
  EXPECT_EQ(DroppedFrequencyMessage(partial->dropped[0]),
            "stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not measure it (1 of 2 ranks "
            "of the stage); a frequency is used only where every rank of the stage measured it");
  // The basic layout has one rank per stage: nothing is ever left out.
  Result<AggregatedProfile> basic = ParseProfileCsvWithWarnings(kHeader + kValidRows, "p.csv");
  ASSERT_TRUE(basic.ok());
  EXPECT_TRUE(basic->dropped.empty());
}

TEST(ProfileCsvTest, PerRankLayoutRejectsPpRankOtherThanStage) {
  const std::string text =
      "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n"
      "0,0,0,0,0,forward,1410,0.1,10\n"
      "1,0,1,0,0,backward,1410,0.2,20\n";
  EXPECT_EQ(ErrorOf(text), "p.csv:3: column 'pp_rank': expected pp_rank to equal stage (0), got 1");
}

TEST(ProfileCsvTest, PerRankLayoutRejectsBadRanks) {
  const std::string header = "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n";
  EXPECT_EQ(ErrorOf(header + "0,-1,0,0,0,forward,1410,0.1,10\n0,0,0,0,0,backward,1410,0.2,20\n"),
            "p.csv:2: column 'dp_rank': expected a rank >= 0, got -1");
  EXPECT_EQ(ErrorOf(header + "0,0,0,x,0,forward,1410,0.1,10\n0,0,0,0,0,backward,1410,0.2,20\n"),
            "p.csv:2: column 'tp_rank': expected an integer, got 'x'");
}

TEST(ProfileCsvTest, PerRankLayoutNeedsAllRankColumns) {
  const std::string text =
      "rank,dp_rank,tp_rank,stage,instruction,frequency,time,energy\n"
      "0,0,0,0,forward,1410,0.1,10\n";
  EXPECT_EQ(ErrorOf(text),
            "p.csv:1: missing column 'pp_rank' (the per-rank layout needs all of rank,dp_rank,pp_rank,tp_rank)");
}

TEST(ProfileCsvTest, PerRankLayoutRejectsDuplicateRankRow) {
  const std::string text =
      "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n"
      "0,0,0,0,0,forward,1410,0.1,10\n"
      "1,0,0,1,0,forward,1410,0.1,10\n"
      "0,0,0,0,0,backward,1410,0.2,20\n"
      "5,0,0,1,0,forward,1410,0.1,10\n";
  EXPECT_EQ(ErrorOf(text),
            "p.csv:5: duplicate row: stage 0, forward, 1410 MHz, dp_rank 0, tp_rank 1 already appears on line 3");
}

// ---------------------------------------------------------------------------------------
// Rejected headers.

TEST(ProfileCsvTest, RejectsMissingColumn) {
  EXPECT_EQ(ErrorOf("stage,instruction,frequency,time\n0,forward,1410,0.05\n"),
            "p.csv:1: missing column 'energy'; " + kExpectedColumns);
  EXPECT_EQ(ErrorOf("instruction,frequency,time,energy\nforward,1410,0.05,1\n"),
            "p.csv:1: missing column 'stage'; " + kExpectedColumns);
}

TEST(ProfileCsvTest, RejectsUnknownColumn) {
  EXPECT_EQ(ErrorOf("stage,instruction,frequency,time,energy,power\n0,forward,1410,0.05,20,400\n"),
            "p.csv:1: unknown column 'power'; " + kExpectedColumns);
  // Column names are case-sensitive.
  EXPECT_EQ(ErrorOf("Stage,instruction,frequency,time,energy\n0,forward,1410,0.05,20\n"),
            "p.csv:1: unknown column 'Stage'; " + kExpectedColumns);
}

TEST(ProfileCsvTest, RejectsColumnTwice) {
  EXPECT_EQ(ErrorOf("stage,instruction,frequency,time,energy,time\n0,forward,1410,0.05,20,0.05\n"),
            "p.csv:1: column 'time' appears twice");
}

// ---------------------------------------------------------------------------------------
// Rejected values.

TEST(ProfileCsvTest, RejectsNonNumericValues) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,fast,20")), "p.csv:2: column 'time': expected a number, got 'fast'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,")),
            "p.csv:2: column 'energy': expected a number, got an empty field");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,20J")), "p.csv:2: column 'energy': expected a number, got '20J'");
  EXPECT_EQ(ErrorOf(WithBadRow("zero,forward,1410,0.05,20")),
            "p.csv:2: column 'stage': expected an integer, got 'zero'");
  EXPECT_EQ(ErrorOf(WithBadRow("0.5,forward,1410,0.05,20")), "p.csv:2: column 'stage': expected an integer, got '0.5'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410.5,0.05,20")),
            "p.csv:2: column 'frequency': expected an integer, got '1410.5'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,,0.05,20")),
            "p.csv:2: column 'frequency': expected an integer, got an empty field");
}

TEST(ProfileCsvTest, RejectsNonFiniteValues) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,nan,20")),
            "p.csv:2: column 'time': expected a finite number, got 'nan'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,NaN")),
            "p.csv:2: column 'energy': expected a finite number, got 'NaN'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,inf,20")),
            "p.csv:2: column 'time': expected a finite number, got 'inf'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,-inf")),
            "p.csv:2: column 'energy': expected a finite number, got '-inf'");
  // Overflowing to infinity is reported as not a (representable) number.
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,1e999")),
            "p.csv:2: column 'energy': expected a number, got '1e999'");
}

TEST(ProfileCsvTest, RejectsNegativeEnergy) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,-1")),
            "p.csv:2: column 'energy': expected an energy in joules >= 0, got -1");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,-0.001")),
            "p.csv:2: column 'energy': expected an energy in joules >= 0, got -0.001");
}

TEST(ProfileCsvTest, RejectsZeroOrNegativeTime) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0,20")),
            "p.csv:2: column 'time': expected a time in seconds > 0, got 0");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.0,20")),
            "p.csv:2: column 'time': expected a time in seconds > 0, got 0.0");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,-0.5,20")),
            "p.csv:2: column 'time': expected a time in seconds > 0, got -0.5");
}

// Times of 1e308 s (or a profile in ns read as s) once reached the planner and came out
// as a NaN frontier with negative savings.
TEST(ProfileCsvTest, RejectsImplausiblyLargeTimeAndEnergy) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,1e308,20")),
            "p.csv:2: column 'time': expected a time in seconds of at most 86400 (one day for one computation), got "
            "1e308");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,86400.5,20")),
            "p.csv:2: column 'time': expected a time in seconds of at most 86400 (one day for one computation), got "
            "86400.5");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,1410,0.05,1e308")),
            "p.csv:2: column 'energy': expected an energy in joules of at most 1e10 (a day at 100 kW for one "
            "computation), got 1e308");
  // The bounds themselves are accepted.
  Result<Profile> at_bounds = ParseProfileCsv(kHeader + "0,forward,1410,86400,1e10\n0,backward,1410,0.1,40\n", "p.csv");
  EXPECT_TRUE(at_bounds.ok()) << at_bounds.error().message;
}

// A pipeline of 2^31 - 1 stages given for a two-stage file: reported as a missing stage,
// without first allocating a profile of that many stages (std::bad_alloc).
TEST(ProfileCsvTest, HugeExpectedStagesIsAMissingStageNotAnAllocation) {
  EXPECT_EQ(ErrorOf(kHeader + kValidRows, 2147483647),
            "p.csv: stage 2 has no 'forward' measurements (expected every stage 0..2147483646 to have forward and "
            "backward rows)");
}

TEST(ProfileCsvTest, RejectsFrequencyOutOfRange) {
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,0,0.05,20")),
            "p.csv:2: column 'frequency': expected a frequency in MHz (1..100000), got 0");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,-15,0.05,20")),
            "p.csv:2: column 'frequency': expected a frequency in MHz (1..100000), got -15");
  EXPECT_EQ(ErrorOf(WithBadRow("0,forward,100001,0.05,20")),
            "p.csv:2: column 'frequency': expected a frequency in MHz (1..100000), got 100001");
}

TEST(ProfileCsvTest, RejectsUnknownInstruction) {
  EXPECT_EQ(
      ErrorOf(WithBadRow("0,optimizer,1410,0.05,20")),
      "p.csv:2: column 'instruction': expected forward, backward, backward_input or backward_weight, got 'optimizer'");
  EXPECT_EQ(
      ErrorOf(WithBadRow("0,Forward,1410,0.05,20")),
      "p.csv:2: column 'instruction': expected forward, backward, backward_input or backward_weight, got 'Forward'");
  EXPECT_EQ(ErrorOf(WithBadRow("0,,1410,0.05,20")),
            "p.csv:2: column 'instruction': expected forward, backward, backward_input or backward_weight, got ''");
}

TEST(ProfileCsvTest, RejectsDuplicateRowNamingTheFirstLine) {
  const std::string text = kHeader +
                           "0,forward,1410,0.05,20\n"
                           "0,backward,1410,0.1,40\n"
                           "\n"  // blank lines still count for line numbers
                           "0,forward,1395,0.051,19\n"
                           "0,forward,1410,0.049,21\n";
  EXPECT_EQ(ErrorOf(text), "p.csv:6: duplicate row: stage 0, forward, 1410 MHz already appears on line 2");
  // "1410.0" and "1410" are the same frequency.
  EXPECT_EQ(ErrorOf(kHeader + "0,backward,1410.0,0.1,40\n0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n"),
            "p.csv:4: duplicate row: stage 0, backward, 1410 MHz already appears on line 2");
}

TEST(ProfileCsvTest, RejectsStageOutOfRange) {
  EXPECT_EQ(ErrorOf(kHeader + kValidRows + "2,forward,1410,0.05,20\n", 2),
            "p.csv:6: column 'stage': expected a stage number in 0..1 (the pipeline has 2 stages), got 2");
  EXPECT_EQ(ErrorOf(kHeader + kValidRows, 1),
            "p.csv:4: column 'stage': expected a stage number in 0..0 (the pipeline has 1 stages), got 1");
  EXPECT_EQ(ErrorOf(WithBadRow("-1,forward,1410,0.05,20")),
            "p.csv:2: column 'stage': expected a stage number >= 0, got -1");
  EXPECT_EQ(ErrorOf(WithBadRow("100001,forward,1410,0.05,20")),
            "p.csv:2: column 'stage': stage number 100001 is implausibly large");
}

TEST(ProfileCsvTest, RejectsStageMissingFromRange) {
  // Stage 1 has no rows at all (S inferred as 3).
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n"
                              "2,forward,1410,0.05,20\n2,backward,1410,0.1,40\n"),
            "p.csv: stage 1 has no 'forward' measurements (expected every stage 0..2 to have forward and "
            "backward rows)");
  // Stage 1 has forwards only.
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n1,forward,1410,0.05,20\n"),
            "p.csv: stage 1 has no 'backward' measurements (expected every stage 0..1 to have forward and "
            "backward rows)");
  // Stage 0 has backwards only.
  EXPECT_EQ(ErrorOf(kHeader + "0,backward,1410,0.1,40\n1,forward,1410,0.05,20\n1,backward,1410,0.1,40\n"),
            "p.csv: stage 0 has no 'forward' measurements (expected every stage 0..1 to have forward and "
            "backward rows)");
  // The file has stages 0..1 but the pipeline has 3.
  EXPECT_EQ(ErrorOf(kHeader + kValidRows, 3),
            "p.csv: stage 2 has no 'forward' measurements (expected every stage 0..2 to have forward and "
            "backward rows)");
}

TEST(ProfileCsvTest, RejectsEmptyFileAndHeaderOnly) {
  EXPECT_EQ(ErrorOf(""), "p.csv: file is empty (expected a header line)");
  EXPECT_EQ(ErrorOf("\n\r\n  \n"), "p.csv: file is empty (expected a header line)");
  EXPECT_EQ(ErrorOf(kHeader), "p.csv: no measurement rows after the header");
  EXPECT_EQ(ErrorOf(kHeader + "\n\n"), "p.csv: no measurement rows after the header");
}

TEST(ProfileCsvTest, RejectsWrongFieldCount) {
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20\n0,backward,1410,0.1\n"),
            "p.csv:3: expected 5 fields as in the header, got 4");
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20,7\n"), "p.csv:2: expected 5 fields as in the header, got 6");
}

TEST(ProfileCsvTest, ReadProfileCsvReportsUnreadableFile) {
  Result<Profile> profile = ReadProfileCsv("/nonexistent/wattcut/profile.csv");
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().message, "/nonexistent/wattcut/profile.csv: cannot open file for reading");
}

// ---------------------------------------------------------------------------------------
// The Perseus artifact's profile.

TEST(ProfileCsvTest, ReadsPerseusGpt3Profile) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  for (int expected_stages : {0, 8}) {
    Result<Profile> profile = ReadProfileCsv(path, expected_stages);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    ASSERT_EQ(profile->num_stages(), 8);
    for (int s = 0; s < 8; ++s) {
      for (InstructionKind kind : {F, B}) {
        const auto& list = profile->measurements(s, kind);
        ASSERT_EQ(list.size(), 38u) << "stage " << s << " " << InstructionName(kind);
        EXPECT_EQ(list.front().freq_mhz, 1410);
        EXPECT_EQ(list.back().freq_mhz, 855);
        for (size_t i = 1; i < list.size(); ++i) EXPECT_EQ(list[i - 1].freq_mhz - list[i].freq_mhz, 15);
        for (const Measurement& m : list) {
          EXPECT_GT(m.time_s, 0);
          EXPECT_GT(m.energy_j, 0);
        }
      }
    }
    // The file's first two data rows.
    EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].time_s, 0.05016166687011708);
    EXPECT_DOUBLE_EQ(profile->measurements(0, F)[0].energy_j, 23.80547200000007);
    EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].time_s, 0.092953779220581);
    EXPECT_DOUBLE_EQ(profile->measurements(0, B)[0].energy_j, 44.584247999999675);
  }
  // A 7-stage pipeline cannot read it.
  Result<Profile> seven = ReadProfileCsv(path, 7);
  ASSERT_FALSE(seven.ok());
  EXPECT_NE(
      seven.error().message.find("column 'stage': expected a stage number in 0..6 (the pipeline has 7 stages), got 7"),
      std::string::npos)
      << seven.error().message;
  EXPECT_EQ(seven.error().message.rfind(path + ":", 0), 0u) << seven.error().message;
}

// Issue 18: a BOM from a spreadsheet is not a column, and no message sends the file's escape
// sequences or NUL bytes to the terminal.
TEST(ProfileCsvTest, ByteOrderMarkIsSkippedAndQuotedInputIsPrintable) {
  EXPECT_TRUE(ParseProfileCsv("\xEF\xBB\xBF" + kHeader + kValidRows, "p.csv").ok());
  EXPECT_EQ(ErrorOf(WithBadRow("0,\x1b[2Jforward" + std::string("\0", 1) + ",1410,0.05,20")),
            "p.csv:2: column 'instruction': expected forward, backward, backward_input or backward_weight, got "
            "'\\x1b[2Jforward\\x00'");
  const std::string unknown = ErrorOf("stage,instruction,frequency,time,\x1b]0;x\x07\n" + kValidRows);
  EXPECT_EQ(unknown.rfind("p.csv:1: unknown column '\\x1b]0;x\\x07'; ", 0), 0u) << unknown;
}

}  // namespace
}  // namespace wattcut

namespace wattcut {
namespace {

TEST(ProfileCsvText, ReadsBackAsTheSameProfile) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(path, 8);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const std::string text = ProfileCsvText(*profile);
  EXPECT_EQ(text.rfind("stage,instruction,frequency,time,energy\n0,forward,", 0), 0u);
  Result<Profile> back = ParseProfileCsv(text, "written", 8);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->num_stages(), profile->num_stages());
  for (int s = 0; s < profile->num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const auto& a = profile->measurements(s, kind);
      const auto& b = back->measurements(s, kind);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].freq_mhz, b[i].freq_mhz);
        EXPECT_EQ(a[i].time_s, b[i].time_s);  // exact: the text reads back as the same double
        EXPECT_EQ(a[i].energy_j, b[i].energy_j);
      }
    }
  }
  EXPECT_EQ(ProfileCsvText(*back), text);
}

}  // namespace
}  // namespace wattcut

namespace wattcut {
namespace {

// The zero-bubble passes: a stage's backward measured as backward_input and
// backward_weight rows, in place of (or beside) the whole backward.
TEST(ProfileCsvSplitBackwardTest, ReadsBackwardInputAndWeightRows) {
  Result<Profile> p = ParseProfileCsv(kHeader +
                                          "0,forward,1410,0.05,20\n"
                                          "0,backward_input,1410,0.06,24\n"
                                          "0,backward_weight,1410,0.04,16\n"
                                          "1,forward,1410,0.06,22\n"
                                          "1,backward,1410,0.12,44\n"
                                          "1,backward_input,1410,0.07,25\n"
                                          "1,backward_weight,1410,0.05,19\n",
                                      "p.csv");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->measurements(0, B).empty());
  ASSERT_EQ(p->measurements(0, InstructionKind::kBackwardInput).size(), 1u);
  EXPECT_DOUBLE_EQ(p->measurements(0, InstructionKind::kBackwardInput)[0].time_s, 0.06);
  EXPECT_DOUBLE_EQ(p->measurements(1, InstructionKind::kBackwardWeight)[0].energy_j, 19);
  EXPECT_DOUBLE_EQ(p->measurements(1, B)[0].time_s, 0.12);
  // Written and read back as itself.
  Result<Profile> again = ParseProfileCsv(ProfileCsvText(*p), "again.csv");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(ProfileCsvText(*again), ProfileCsvText(*p));
}

TEST(ProfileCsvSplitBackwardTest, RefusesHalfASplit) {
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20\n"
                              "0,backward_input,1410,0.06,24\n"),
            "p.csv: stage 0 has 'backward_input' but no 'backward_weight' measurements (a split backward needs both)");
  EXPECT_EQ(ErrorOf(kHeader + "0,forward,1410,0.05,20\n"
                              "0,backward,1410,0.1,40\n"
                              "0,backward_weight,1410,0.06,24\n"),
            "p.csv: stage 0 has 'backward_weight' but no 'backward_input' measurements (a split backward needs both)");
  EXPECT_EQ(ErrorOf(kHeader + "0,backward_input,1410,0.06,24\n0,backward_weight,1410,0.04,16\n"),
            "p.csv: stage 0 has no 'forward' measurements (expected every stage 0..0 to have forward and backward "
            "rows)");
}

}  // namespace
}  // namespace wattcut
