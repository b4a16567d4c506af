// `wattcut plan show` and `wattcut plan list` on a `wattcut frontier` folder, as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/cli/command_runner.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_files.h"
#include "wattcut/plan/plan_lookup.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

// One frontier for every test: 4 stages x 4 microbatches of the built-in A100 model, with
// every plan also as JSON and as a Zeus literal to compare with.
class PlanCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    for (const char* plans : {"json", "zeus"}) {
      auto run = RunWattcut("frontier --stages 4 --microbatches 4 --plans " + std::string(plans) + " --out " +
                            dir_->path() + "/" + plans);
      ASSERT_EQ(run.exit_code, 0) << run.err;
    }
    Result<Frontier> frontier = ReadFrontierFile(Dir());
    ASSERT_TRUE(frontier.ok()) << frontier.error().message;
    frontier_ = new Frontier(std::move(*frontier));
  }
  static void TearDownTestSuite() {
    delete frontier_;
    delete dir_;
  }
  static std::string Dir() { return dir_->path() + "/json"; }
  static const Frontier& F() { return *frontier_; }
  static std::string Json(size_t i) { return ReadFile(Dir() + "/plans/" + PlanFileStem(i) + ".json"); }
  static std::string Zeus(size_t i) { return ReadFile(dir_->path() + "/zeus/zeus/" + PlanFileStem(i) + ".py"); }

  static TempDir* dir_;
  static Frontier* frontier_;
};
TempDir* PlanCommand::dir_ = nullptr;
Frontier* PlanCommand::frontier_ = nullptr;

TEST_F(PlanCommand, ShowPrintsThePlanFilesText) {
  const size_t last = F().fastest_index();
  for (size_t i : {size_t{0}, F().min_energy_index(), last / 2, last}) {
    auto json = RunWattcut("plan show " + Dir() + " --point " + std::to_string(i));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(json.out, Json(i)) << i;
    auto zeus = RunWattcut("plan show " + Dir() + " --point " + std::to_string(i) + " --format zeus");
    ASSERT_EQ(zeus.exit_code, 0) << zeus.err;
    EXPECT_EQ(zeus.out, Zeus(i)) << i;
  }
  // The .wattcut file itself works as well as its folder.
  auto file = RunWattcut("plan show " + Dir() + "/frontier.wattcut --point 1");
  EXPECT_EQ(file.out, Json(1));
}

TEST_F(PlanCommand, ShowLooksUpByTimeSlowdownAndPower) {
  const double t_min = F().points()[F().fastest_index()].time_s;
  const double t_star = F().points()[F().min_energy_index()].time_s;
  struct Case {
    std::string flags;
    size_t expected;
  };
  const std::vector<Case> cases = {
      {"--time " + std::to_string(t_min), F().fastest_index()},
      {"--time " + std::to_string((t_min + t_star) / 2), F().IndexForIterationTime((t_min + t_star) / 2)},
      {"--time 1000", F().min_energy_index()},
      {"--slowdown 1", F().fastest_index()},
      {"--slowdown 1.05", F().IndexForIterationTime(1.05 * t_min)},
      {"--power-per-gpu 100000", F().fastest_index()},
      {"--power-per-gpu 230", *PointForPowerPerGpu(F(), 230)},
      {"--peak-power-per-gpu 240", *PointForPeakPowerPerGpu(F(), 240)},
  };
  for (const Case& c : cases) {
    auto run = RunWattcut("plan show " + Dir() + " " + c.flags);
    ASSERT_EQ(run.exit_code, 0) << c.flags << ": " << run.err;
    EXPECT_EQ(run.out, Json(c.expected)) << c.flags;
  }
  // The power lookup is the fastest plan at or below the power asked.
  const size_t at_230 = *PointForPowerPerGpu(F(), 230);
  EXPECT_LE(AveragePowerPerGpuW(F(), at_230), 230);
  EXPECT_GT(AveragePowerPerGpuW(F(), at_230 + 1), 230);
  const size_t peak_240 = *PointForPeakPowerPerGpu(F(), 240);
  EXPECT_LE(*F().points()[peak_240].peak_1s_power_w / 4, 240);
  EXPECT_GT(*F().points()[peak_240 + 1].peak_1s_power_w / 4, 240);
}

TEST_F(PlanCommand, BadLookupsAreNamed) {
  const size_t points = F().points().size();
  auto expect_error = [&](const std::string& flags, const std::string& message) {
    auto run = RunWattcut("plan show " + Dir() + " " + flags);
    EXPECT_EQ(run.exit_code, 1) << flags;
    EXPECT_EQ(run.out, "") << flags;
    EXPECT_NE(run.err.find("wattcut plan show: error: " + message), std::string::npos) << flags << ": " << run.err;
  };
  expect_error(
      "--point " + std::to_string(points),
      "point " + std::to_string(points) + " is not on the frontier: its points are 0.." + std::to_string(points - 1));
  expect_error("--time 0.5", "no plan is as fast as 0.5 s: the fastest, T_min, takes 1.034 s (plan " +
                                 std::to_string(F().fastest_index()) + ")");
  expect_error("--slowdown 0.9", "slowdown: expected a factor >= 1 of T_min, got 0.9");
  expect_error("--power-per-gpu 10", "no plan draws 10 W per GPU or less on average: the lowest is ");
  expect_error(
      "", "give exactly one of --point N, --time T, --slowdown K, --power-per-gpu W or --peak-power-per-gpu W (got 0)");
  expect_error(
      "--point 1 --time 2",
      "give exactly one of --point N, --time T, --slowdown K, --power-per-gpu W or --peak-power-per-gpu W (got 2)");
  auto format = RunWattcut("plan show " + Dir() + " --point 1 --format yaml");
  EXPECT_EQ(format.exit_code, 2);
  auto not_number = RunWattcut("plan show " + Dir() + " --time soon");
  EXPECT_EQ(not_number.exit_code, 2);
}

TEST_F(PlanCommand, MissingTruncatedAndCorruptFilesAreRefusedWithTheirLine) {
  TempDir dir;
  auto expect_error = [&](const std::string& path, const std::string& message) {
    auto run = RunWattcut("plan show " + path + " --point 0");
    EXPECT_EQ(run.exit_code, 1) << path;
    EXPECT_EQ(run.err, "wattcut plan show: error: " + message + "\n") << path;
    auto list = RunWattcut("plan list " + path);
    EXPECT_EQ(list.exit_code, 1) << path;
    EXPECT_EQ(list.err, "wattcut plan list: error: " + message + "\n") << path;
  };
  expect_error(dir.path() + "/nothing", dir.path() + "/nothing: no such file or directory");
  expect_error(dir.path(), dir.path() +
                               ": no frontier.wattcut in this folder (is it a `wattcut frontier --out` folder? older "
                               "versions wrote no frontier.wattcut: run wattcut frontier again)");
  const std::string text = ReadFile(Dir() + "/frontier.wattcut");
  // Cut in the middle of the points: the count of points says more follow.
  // The 'points' line's number: the lines before the newline that ends the line above it, plus 2.
  const size_t points_line =
      static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(text.find("\npoints ")), '\n')) + 2;
  const std::string cut = text.substr(0, text.find("\np ", text.size() / 2) + 1);
  std::ofstream(dir.path() + "/cut.wattcut") << cut;
  const auto cut_lines = static_cast<size_t>(std::count(cut.begin(), cut.end(), '\n'));
  expect_error(dir.path() + "/cut.wattcut",
               dir.path() + "/cut.wattcut:" + std::to_string(cut_lines) + ": the file ends early; expected a 'p' line");
  // A damaged change on the second point's line.
  std::string damaged = text;
  const size_t second = damaged.find("\np ", damaged.find("\np ") + 1) + 1;
  const size_t change = damaged.find(':', second);
  damaged.replace(change, 1, "#");
  std::ofstream(dir.path() + "/damaged.wattcut") << damaged;
  auto run = RunWattcut("plan show " + dir.path() + "/damaged.wattcut --point 0");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("damaged.wattcut:" + std::to_string(points_line + 2) +
                         ": change COMPUTATION:DURATION_UNITS: expected A:B"),
            std::string::npos)
      << run.err;
  // Not a frontier file at all.
  std::ofstream(dir.path() + "/csv.wattcut") << "plan,time,energy\n";
  expect_error(dir.path() + "/csv.wattcut", dir.path() +
                                                "/csv.wattcut:1: expected the format line 'wattcut.frontier/v1', "
                                                "'wattcut.frontier/v2' or 'wattcut.dag_frontier/v1', got "
                                                "'plan,time,energy'");
}

TEST_F(PlanCommand, ListSummarisesTheFrontier) {
  auto list = RunWattcut("plan list " + Dir());
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const size_t points = F().points().size();
  EXPECT_EQ(list.out.rfind("frontier: " + std::to_string(points) + " points, 4 stages, 32 computations", 0), 0u)
      << list.out;
  EXPECT_NE(list.out.find("  T_min  1.0340 s"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("  T*     "), std::string::npos);
  EXPECT_NE(list.out.find("avg_power_w  avg_w_per_gpu      peak_1s_w  peak_1s_w_gpu"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("(11 of " + std::to_string(points) + " rows; --all prints every one)"), std::string::npos)
      << list.out;
  auto all = RunWattcut("plan list " + Dir() + " --all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto lines = static_cast<size_t>(std::count(all.out.begin(), all.out.end(), '\n'));
  EXPECT_EQ(lines, points + 7) << all.out.substr(0, 400);  // 5 summary lines, a blank one, the header
}

}  // namespace
}  // namespace wattcut
