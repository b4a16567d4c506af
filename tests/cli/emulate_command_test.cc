// `wattcut emulate` as a user runs it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/cli/command_runner.h"
#include "wattcut/base/csv_reader.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

TEST(EmulateCommand, WritesSummaryTableAndPictures) {
  TempDir dir;
  std::string out = dir.path() + "/emu";
  auto result = RunWattcut(
      "emulate --gpu-model a40 --stages 4 --microbatches 8 --pipelines 4 --tp 2 "
      "--slowdown 1.0:1.2:0.1 --out " +
      out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("job: 4 pipelines x 4 stages x 2 tensor-parallel GPUs = 32 GPUs"), std::string::npos)
      << result.out;
  nlohmann::json summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(summary["format"], "wattcut.emulation/v1");
  EXPECT_EQ(summary["config"]["pipelines"], 4);
  EXPECT_GT(summary["frontier"]["t_star_over_t_min"].get<double>(), 1.0);
  EXPECT_EQ(summary["results"].size(), 3u * 5);
  std::string csv = ReadFile(out + "/emulation.csv");
  EXPECT_EQ(csv.rfind("method,slowdown,iteration_time_s,energy_j,saving_percent,plan_time_s\n", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 15);
  for (const char* picture : {"frontier.svg", "savings.svg", "timeline_fastest.svg", "timeline_min_energy.svg"}) {
    std::string svg = ReadFile(out + "/" + picture);
    EXPECT_NE(svg.find("<svg"), std::string::npos) << picture;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << picture;
  }
}

TEST(EmulateCommand, TableCellsReadBackAsTheDoublesOfTheSummary) {
  TempDir dir;
  std::string out = dir.path() + "/emu";
  auto result = RunWattcut("emulate --stages 4 --microbatches 6 --pipelines 4 --slowdown 1.0:1.2:0.1 --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // summary.json's numbers are exact (nlohmann writes the shortest text that reads back).
  nlohmann::json summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  Result<CsvTable> table = CsvTable::Parse(ReadFile(out + "/emulation.csv"), "emulation.csv");
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->rows().size(), summary["results"].size());
  int rounded_by_ten_digits = 0;
  for (size_t i = 0; i < table->rows().size(); ++i) {
    const CsvRow& row = table->rows()[i];
    const nlohmann::json& expected = summary["results"][i];
    EXPECT_EQ(row.fields[0], expected["method"].get<std::string>());
    for (size_t c = 1; c < table->header().size(); ++c) {
      const double value = expected[table->header()[c]].get<double>();
      EXPECT_EQ(*table->number(row, c), value) << table->where(row, c) << row.fields[c];
      if (std::strtod(GeneralText(value, 10).c_str(), nullptr) != value) ++rounded_by_ten_digits;
    }
  }
  EXPECT_GT(rounded_by_ten_digits, 0);  // the table's old 10 digits would have lost these
}

TEST(EmulateCommand, ReproducesFigure7FromTheArtifactProfile) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  auto result =
      RunWattcut("emulate --profile " + profile +
                 " --stages 8 --microbatches 96 --pipelines 16 --tp 8 --p2p-power 83.64 --slowdown 1.2 --out " +
                 dir.path() + "/e");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("T*/T_min 1.148"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("     1.200    27.0"), std::string::npos) << result.out;
}

TEST(EmulateCommand, ImpossibleRequestsAreRefused) {
  TempDir dir;
  auto slow = RunWattcut("emulate --slowdown 0.8 --out " + dir.path() + "/o");
  EXPECT_EQ(slow.exit_code, 1);
  EXPECT_EQ(
      slow.err,
      "wattcut emulate: error: --slowdown '0.8': a straggler slowdown must be >= 1 (1 = no straggler), got 0.800000\n");
  auto none = RunWattcut("emulate --pipelines 0 --out " + dir.path() + "/o");
  EXPECT_EQ(none.err, "wattcut emulate: error: --pipelines must be >= 1, got 0\n");
  std::string profile = dir.path() + "/gap.csv";
  std::ofstream(profile) << "stage,instruction,frequency,time,energy\n"
                            "0,forward,1410,0.05,20\n0,backward,1410,0.1,40\n"
                            "2,forward,1410,0.05,20\n2,backward,1410,0.1,40\n";
  auto gap = RunWattcut("emulate --profile " + profile + " --microbatches 4 --p2p-power 80 --out " + dir.path() + "/o");
  EXPECT_EQ(gap.exit_code, 1);
  EXPECT_EQ(
      gap.err,
      "wattcut emulate: error: " + profile +
          ": stage 1 has no 'forward' measurements (expected every stage 0..2 to have forward and backward rows)\n");
  EXPECT_FALSE(fs::exists(dir.path() + "/o"));
}

TEST(EmulateCommand, ChecksAFrontierComputedBefore) {
  TempDir dir;
  auto frontier = RunWattcut("frontier --stages 4 --microbatches 6 --plans none --out " + dir.path() + "/f");
  ASSERT_EQ(frontier.exit_code, 0) << frontier.err;
  auto same = RunWattcut("emulate --stages 4 --microbatches 6 --slowdown 1.1 --frontier " + dir.path() + "/f --out " +
                         dir.path() + "/e1");
  EXPECT_EQ(same.exit_code, 0) << same.err;
  auto other = RunWattcut("emulate --stages 4 --microbatches 8 --slowdown 1.1 --frontier " + dir.path() + "/f --out " +
                          dir.path() + "/e2");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("(was it computed from another profile or with other options?)"), std::string::npos)
      << other.err;
}

}  // namespace
}  // namespace wattcut
