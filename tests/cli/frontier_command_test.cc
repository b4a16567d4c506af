// `wattcut frontier` as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_files.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

size_t CountLines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(FrontierCommand, RunsOnBuiltInDefaultsAndWritesTheCompactFile) {
  TempDir dir;
  std::string out = dir.path() + "/demo";
  auto result = RunWattcut("frontier --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("built-in GPU model a100-sxm"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("intrinsic saving of the fastest plan vs AllMax"), std::string::npos);
  EXPECT_NE(result.out.find("/demo/frontier.wattcut (every plan, "), std::string::npos) << result.out;
  std::string csv = ReadFile(out + "/frontier.csv");
  ASSERT_EQ(csv.rfind("plan,time,energy,duration_units,effective_energy,avg_power_w,avg_power_per_gpu_w,"
                      "peak_1s_power_w\n",
                      0),
            0u);
  size_t points = CountLines(csv) - 1;
  EXPECT_GT(points, 100u);
  // By default no per-point files: every plan is in frontier.wattcut.
  EXPECT_FALSE(fs::exists(out + "/plans"));
  Result<Frontier> frontier = ReadFrontierFile(out);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  ASSERT_EQ(frontier->points().size(), points);
  ASSERT_EQ(frontier->PlanAt(points - 1).stages.size(), 8u);
  EXPECT_EQ(frontier->PlanAt(points - 1).stages[0].size(), 24u);
  EXPECT_TRUE(frontier->points().back().peak_1s_power_w.has_value());
  std::string zeus = ReadFile(out + "/zeus/fastest.py");
  EXPECT_EQ(zeus.rfind("[\n    [(\"forward\", ", 0), 0u) << zeus.substr(0, 80);
  EXPECT_EQ(zeus, ZeusPlanLiteral(frontier->PlanAt(points - 1)));
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 4u);  // frontier.wattcut, frontier.csv, zeus/fastest.py, zeus/min_energy.py
}

// The compact file's size per point is bounded (issue 14: the 65,844-point case under 50 MB).
TEST(FrontierCommand, TheCompactFileTakesFewBytesAPoint) {
  TempDir dir;
  auto result = RunWattcut("frontier --gpu-model a40 --microbatches 24 --unit-time 0.0002 --out " + dir.path() + "/f");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const size_t points = CountLines(ReadFile(dir.path() + "/f/frontier.csv")) - 1;
  ASSERT_GT(points, 1000u);
  const auto bytes = static_cast<double>(fs::file_size(dir.path() + "/f/frontier.wattcut"));
  EXPECT_LT(bytes / static_cast<double>(points), 200.0) << bytes << " bytes for " << points << " points";
}

// The power columns: energy / time per pipeline and per GPU, and a peak 1-s power at least the average.
TEST(FrontierCommand, FrontierCsvHasThePowerOfEveryPlan) {
  TempDir dir;
  auto result = RunWattcut("frontier --stages 4 --microbatches 4 --out " + dir.path() + "/f");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find(" W a GPU on average, peak 1-s "), std::string::npos) << result.out;
  std::istringstream csv(ReadFile(dir.path() + "/f/frontier.csv"));
  std::string line;
  std::getline(csv, line);
  size_t rows = 0;
  while (std::getline(csv, line)) {
    std::vector<double> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(std::stod(cell));
    ASSERT_EQ(cells.size(), 8u) << line;
    EXPECT_DOUBLE_EQ(cells[5], cells[2] / cells[1]) << line;
    EXPECT_DOUBLE_EQ(cells[6], cells[5] / 4) << line;
    EXPECT_GE(cells[7], cells[5] * (1 - 1e-12)) << line;
    ++rows;
  }
  EXPECT_GT(rows, 10u);
}

// --plans json|zeus|ends write per-point files besides the compact file; all is json, with a warning.
TEST(FrontierCommand, PlansOnRequest) {
  TempDir dir;
  auto count = [](const std::string& folder) {
    size_t n = 0;
    if (!fs::exists(folder)) return n;
    for (const auto& entry : fs::directory_iterator(folder)) n += entry.is_regular_file() ? 1 : 0;
    return n;
  };
  const std::string base = "frontier --stages 4 --microbatches 4 --out " + dir.path();
  auto json = RunWattcut(base + "/json --plans json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.err, "");
  Result<Frontier> frontier = ReadFrontierFile(dir.path() + "/json/frontier.wattcut");
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  const size_t points = frontier->points().size();
  EXPECT_EQ(count(dir.path() + "/json/plans"), points);
  EXPECT_EQ(count(dir.path() + "/json/zeus"), 2u);
  for (size_t i = 0; i < points; ++i) {
    ASSERT_EQ(ReadFile(dir.path() + "/json/plans/" + PlanFileStem(i) + ".json"), PlanJson(*frontier, i)) << i;
  }
  Result<StoredPlan> last =
      ParsePlanJson(ReadFile(dir.path() + "/json/plans/" + PlanFileStem(points - 1) + ".json"), "last");
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_EQ(last->plan.stages.size(), 4u);

  auto all = RunWattcut(base + "/all --plans all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.err, "wattcut frontier: warning: --plans all is deprecated: it is --plans json\n");
  EXPECT_EQ(count(dir.path() + "/all/plans"), points);

  auto zeus = RunWattcut(base + "/zeus --plans zeus");
  ASSERT_EQ(zeus.exit_code, 0) << zeus.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/zeus/plans"));
  EXPECT_EQ(count(dir.path() + "/zeus/zeus"), points + 2);
  EXPECT_EQ(ReadFile(dir.path() + "/zeus/zeus/" + PlanFileStem(1) + ".py"), ZeusPlanLiteral(frontier->PlanAt(1)));

  auto ends = RunWattcut(base + "/ends --plans ends");
  ASSERT_EQ(ends.exit_code, 0) << ends.err;
  EXPECT_EQ(count(dir.path() + "/ends/plans"), 3u);
  EXPECT_EQ(count(dir.path() + "/ends/zeus"), 5u);
  for (size_t i : {size_t{0}, frontier->min_energy_index(), frontier->fastest_index()}) {
    EXPECT_TRUE(fs::exists(dir.path() + "/ends/plans/" + PlanFileStem(i) + ".json")) << i;
    EXPECT_TRUE(fs::exists(dir.path() + "/ends/zeus/" + PlanFileStem(i) + ".py")) << i;
  }
  auto bad = RunWattcut(base + "/bad --plans every");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("every"), std::string::npos) << bad.err;
}

TEST(FrontierCommand, ReadsTheArtifactProfile) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  auto result = RunWattcut("frontier --profile " + profile + " --stages 8 --microbatches 12 --p2p-power 83.64 --out " +
                           dir.path() + "/f --plans ends");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("frontier: 640 points from 3.4570 s to 2.8180 s"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("T_min  2.8180 s"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("intrinsic saving of the fastest plan vs AllMax: 15.2"), std::string::npos) << result.out;
}

TEST(FrontierCommand, BadProfileIsRejectedWithLocationAndNoOutput) {
  TempDir dir;
  std::string profile = dir.path() + "/bad.csv";
  std::ofstream(profile)
      << "stage,instruction,frequency,time,energy\n0,forward,1410,0.05,23\n0,sideways,1410,0.05,23\n";
  auto result =
      RunWattcut("frontier --profile " + profile + " --microbatches 4 --p2p-power 80 --out " + dir.path() + "/out");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "wattcut frontier: error: " + profile +
                            ":3: column 'instruction': expected forward, backward, backward_input or "
                            "backward_weight, got 'sideways'\n");
  EXPECT_FALSE(fs::exists(dir.path() + "/out"));
  // No staging directory left behind either.
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".out.partial"), std::string::npos);
  }
}

TEST(FrontierCommand, RequiredOptionsAreNamed) {
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  auto no_mb = RunWattcut("frontier --profile " + profile + " --p2p-power 83.64 --out " + dir.path() + "/o");
  EXPECT_EQ(no_mb.exit_code, 1);
  EXPECT_EQ(no_mb.err, "wattcut frontier: error: --microbatches is required with --profile\n");
  auto no_power = RunWattcut("frontier --profile " + profile + " --microbatches 12 --out " + dir.path() + "/o");
  EXPECT_EQ(no_power.err, "wattcut frontier: error: --p2p-power (blocking power in W) is required with --profile\n");
  auto stages = RunWattcut("frontier --profile " + profile + " --stages 4 --microbatches 12 --p2p-power 83.64 --out " +
                           dir.path() + "/o");
  EXPECT_EQ(stages.exit_code, 1);
  EXPECT_NE(stages.err.find("column 'stage': expected a stage number in 0..3 (the pipeline has 4 stages), got 4"),
            std::string::npos)
      << stages.err;
  auto schedule = RunWattcut("frontier --schedule zigzag --out " + dir.path() + "/o");
  EXPECT_EQ(schedule.err,
            "wattcut frontier: error: unknown pipeline schedule 'zigzag' (expected 1f1b, gpipe, interleaved or "
            "zb-h1)\n");
  auto unit = RunWattcut("frontier --unit-time -1 --out " + dir.path() + "/o");
  EXPECT_EQ(unit.err, "wattcut frontier: error: unit_time_s must be a positive number of seconds\n");
  auto gpu = RunWattcut("frontier --gpu-model v100 --out " + dir.path() + "/o");
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_NE(gpu.err.find("a100-sxm"), std::string::npos) << gpu.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/o"));
}

TEST(FrontierCommand, NeverOverwritesAnExistingDirectoryUnlessAsked) {
  TempDir dir;
  std::string out = dir.path() + "/mine";
  fs::create_directories(out);
  std::ofstream(out + "/notes.txt") << "keep me";
  auto refused = RunWattcut("frontier --out " + out + " --plans none");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("directory exists and is not empty (pass --overwrite to replace it)"), std::string::npos);
  EXPECT_EQ(ReadFile(out + "/notes.txt"), "keep me");
  auto replaced = RunWattcut("frontier --out " + out + " --plans none --overwrite");
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;
  EXPECT_FALSE(fs::exists(out + "/notes.txt"));
  EXPECT_TRUE(fs::exists(out + "/frontier.csv"));
}

TEST(FrontierCommand, GpipeAndConvexHullRun) {
  TempDir dir;
  auto result = RunWattcut(
      "frontier --gpu-model a40 --stages 4 --microbatches 6 --schedule gpipe --cost-model convex-hull "
      "--plans ends --out " +
      dir.path() + "/g");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("4 stages x 6 microbatches, gpipe"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("convex-hull cost model"), std::string::npos);
}

}  // namespace
}  // namespace wattcut
