// `wattcut frontier` as a user runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/plan/plan_files.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

size_t CountLines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(FrontierCommand, RunsOnBuiltInDefaultsAndWritesEveryPlan) {
  TempDir dir;
  std::string out = dir.path() + "/demo";
  auto result = RunWattcut("frontier --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("built-in GPU model a100-sxm"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("intrinsic saving of the fastest plan vs AllMax"), std::string::npos);
  std::string csv = ReadFile(out + "/frontier.csv");
  ASSERT_EQ(csv.rfind("plan,time,energy,", 0), 0u);
  size_t points = CountLines(csv) - 1;
  EXPECT_GT(points, 100u);
  size_t plans = 0;
  for (const auto& entry : fs::directory_iterator(out + "/plans")) {
    (void)entry;
    ++plans;
  }
  EXPECT_EQ(plans, points);
  Result<StoredPlan> last = ParsePlanJson(ReadFile(out + "/plans/" + PlanFileStem(points - 1) + ".json"), "last");
  ASSERT_TRUE(last.ok()) << last.error().message;
  ASSERT_EQ(last->plan.stages.size(), 8u);
  EXPECT_EQ(last->plan.stages[0].size(), 24u);
  std::string zeus = ReadFile(out + "/zeus/fastest.py");
  EXPECT_EQ(zeus.rfind("[\n    [(\"forward\", ", 0), 0u) << zeus.substr(0, 80);
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
