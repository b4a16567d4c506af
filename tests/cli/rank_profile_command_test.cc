// `wattcut frontier` on a per-rank (Merak/Zeus) profile in which one tensor-parallel rank
// lacks a measurement: it plans exactly like the profile with that measurement removed
// for every rank, and says which frequency it left out (issue 15).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

std::string Exact(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

// The GPT-3 A100 stage profile as a 2-way tensor-parallel per-rank profile (one dp replica,
// pp_rank = stage): both tp ranks of a stage take the stage's time and draw half its energy,
// so that the aggregate (max time, summed energy) is the stage profile itself. Rows of
// (stage 0, forward, 1410 MHz) are left out for the tp ranks in `skip_tp_ranks`.
std::string TwoWayTpProfile(const std::string& stage_profile, const std::vector<int>& skip_tp_ranks) {
  std::istringstream in(ReadFile(stage_profile));
  std::string line;
  auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // the file has CRLF line ends
    return true;
  };
  next_line();
  EXPECT_EQ(line, "stage,instruction,frequency,time,energy");
  std::string out = "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy\n";
  while (next_line()) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string stage, instruction, frequency, time, energy;
    std::getline(fields, stage, ',');
    std::getline(fields, instruction, ',');
    std::getline(fields, frequency, ',');
    std::getline(fields, time, ',');
    std::getline(fields, energy, ',');
    for (int tp = 0; tp < 2; ++tp) {
      bool skipped = stage == "0" && instruction == "forward" && frequency == "1410" &&
                     std::find(skip_tp_ranks.begin(), skip_tp_ranks.end(), tp) != skip_tp_ranks.end();
      if (skipped) continue;
      out += std::to_string(std::stoi(stage) * 2 + tp) + ",0," + stage + "," + std::to_string(tp) + "," + stage + "," +
             instruction + "," + frequency + "," + time + "," + Exact(std::stod(energy) / 2) + "\n";
    }
  }
  return out;
}

// The report on stdout without the lines that name files ("profile: PATH", "wrote PATH, ...").
std::string Report(const std::string& out) {
  size_t begin = out.find('\n') + 1;
  return out.substr(begin, out.find("\nwrote ") - begin);
}

TEST(RankProfileCommand, ATpRankLackingAFrequencyPlansLikeTheProfileWithoutItAndWarns) {
  WATTCUT_REQUIRE_SHARED_FILE(stage_profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  const std::string partial = dir.path() + "/partial.csv";
  const std::string reduced = dir.path() + "/reduced.csv";
  std::ofstream(partial) << TwoWayTpProfile(stage_profile, {1});
  std::ofstream(reduced) << TwoWayTpProfile(stage_profile, {0, 1});
  const std::string options = " --stages 8 --microbatches 12 --p2p-power 83.64 --plans ends --out ";
  auto from_partial = RunWattcut("frontier --profile " + partial + options + dir.path() + "/p");
  auto from_reduced = RunWattcut("frontier --profile " + reduced + options + dir.path() + "/r");
  ASSERT_EQ(from_partial.exit_code, 0) << from_partial.err;
  ASSERT_EQ(from_reduced.exit_code, 0) << from_reduced.err;

  EXPECT_EQ(from_partial.err,
            "wattcut frontier: warning: stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, tp_rank 1) did not "
            "measure it (1 of 2 ranks of the stage); a frequency is used only where every rank of the stage "
            "measured it\n");
  EXPECT_EQ(from_reduced.err, "");
  const std::string frontier = ReadFile(dir.path() + "/p/frontier.csv");
  EXPECT_FALSE(frontier.empty());
  EXPECT_TRUE(frontier == ReadFile(dir.path() + "/r/frontier.csv")) << "the two frontiers differ";
  EXPECT_EQ(Report(from_partial.out), Report(from_reduced.out));
  EXPECT_NE(from_partial.out.find("frontier: 640 points from "), std::string::npos) << from_partial.out;
  EXPECT_NE(from_partial.out.find("intrinsic saving of the fastest plan vs AllMax: 15.2"), std::string::npos)
      << from_partial.out;
}

TEST(RankProfileCommand, EmulateWarnsToo) {
  WATTCUT_REQUIRE_SHARED_FILE(stage_profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  const std::string partial = dir.path() + "/partial.csv";
  std::ofstream(partial) << TwoWayTpProfile(stage_profile, {1});
  auto result =
      RunWattcut("emulate --profile " + partial +
                 " --stages 8 --microbatches 12 --pipelines 2 --tp 2 --p2p-power 83.64 --out " + dir.path() + "/e");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.rfind("wattcut emulate: warning: stage 0 forward 1410 MHz is not used: rank 1 (dp_rank 0, "
                             "tp_rank 1) did not measure it",
                             0),
            0u)
      << result.err;
}

}  // namespace
}  // namespace wattcut
