// `wattcut plan schedule` on a `wattcut frontier` folder, as a user runs it (issue 32).
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

// Hourly values for `days` from 2026-12-07T00:00Z: the trough at 03:00, the peak (three times the
// trough) at 15:00.
void WriteDailySeries(const std::string& path, const std::string& column, double trough, int days) {
  std::ofstream f(path);
  f << "time," << column << "\n";
  for (int h = 0; h < days * 24; ++h) {
    char when[32];
    std::snprintf(when, sizeof(when), "2026-12-%02dT%02d:00Z", 7 + h / 24, h % 24);
    f << when << "," << trough * (2 - std::cos(2 * M_PI * (h % 24 - 3) / 24)) << "\n";
  }
}

class PlanScheduleCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
    auto run = RunWattcut("frontier --profile " + profile + " --stages 8 --microbatches 12 --p2p-power 83.64 --out " +
                          dir.path() + "/gpt3");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    WriteDailySeries(dir.path() + "/prices.csv", "price", 0.10, 9);
    WriteDailySeries(dir.path() + "/carbon.csv", "gco2_per_kwh", 150, 9);
  }
  nlohmann::json Schedule(const std::string& out) {
    return nlohmann::json::parse(ReadFile(dir.path() + "/" + out + "/schedule.json"));
  }
  TempDir dir;
};

// 7 days of iterations at the fastest plan (2.818 s), 10 % slack: the schedule costs less than both
// baselines, and its numbers add up.
TEST_F(PlanScheduleCommand, AWeekWithTenPercentSlackCostsLessThanBothBaselines) {
  const std::string d = dir.path();
  auto run = RunWattcut("plan schedule " + d + "/gpt3 --iterations 214620 --start 2026-12-07T00:00Z --deadline " +
                        "2026-12-14T16:48Z --price " + d + "/prices.csv --carbon " + d + "/carbon.csv --pipelines 4 " +
                        "--out " + d + "/week");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("schedule (cost) of 214620 iterations by 2026-12-14 16:48:00.000000+00:00"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("% below the fastest plan all along"), std::string::npos) << run.out;
  const nlohmann::json s = Schedule("week");
  EXPECT_EQ(s["format"], "wattcut.deadline_schedule/v1");
  EXPECT_EQ(s["inputs"]["gpus"], 32);
  EXPECT_EQ(s["inputs"]["budget_compared_with"], "peak_1s_power");
  const double cost = s["totals"]["cost"].get<double>();
  EXPECT_LT(cost, s["baselines"]["fastest"]["cost"].get<double>());
  EXPECT_LT(cost, s["baselines"]["least_energy"]["cost"].get<double>());
  EXPECT_GT(s["saving"]["vs_fastest"].get<double>(), 0.05);
  EXPECT_GT(s["saving"]["vs_least_energy"].get<double>(), 0.005);
  EXPECT_LE(s["totals"]["finish_s"].get<double>(), s["deadline_s"].get<double>());
  EXPECT_TRUE(s["totals"]["carbon_kg"].is_number());
  double iterations = 0, energy = 0, money = 0;
  for (const auto& k : s["intervals"]) {
    iterations += k["iterations"].get<double>();
    energy += k["energy_kwh"].get<double>();
    money += k["cost"].get<double>();
    double seconds = 0;
    for (const auto& p : k["plans"]) seconds += p["seconds"].get<double>();
    EXPECT_LE(seconds, k["end_s"].get<double>() - k["start_s"].get<double>() + 1e-6);
  }
  EXPECT_NEAR(iterations, 214620, 1e-3);
  EXPECT_NEAR(energy, s["totals"]["energy_kwh"].get<double>(), 1e-6);
  EXPECT_NEAR(money, cost, 1e-6);
  for (const char* f : {"schedule_power.svg", "schedule_progress.svg"}) {
    EXPECT_NE(ReadFile(d + "/week/" + f).find("</svg>"), std::string::npos) << f;
  }
}

// Carbon as the objective, and a per-GPU budget for the two cleanest hours, where the schedule
// without it runs plans over that budget: with it, no share in them does.
TEST_F(PlanScheduleCommand, ACarbonObjectiveKeepsEveryBudget) {
  const std::string d = dir.path();
  {
    std::ofstream b(d + "/budget.csv");
    b << "time,watts_per_gpu\n2026-12-07T00:00Z,400\n2026-12-07T02:00Z,290\n2026-12-07T04:00Z,400\n";
  }
  auto csv = ReadFile(d + "/gpt3/frontier.csv");
  // frontier.csv: plan,time,energy,duration_units,effective_energy,avg_power_w,avg_power_per_gpu_w,peak_1s_power_w
  auto peak_per_gpu = [&](int point) {
    const size_t at = csv.find("\n" + std::to_string(point) + ",");
    EXPECT_NE(at, std::string::npos);
    const std::string row = csv.substr(at + 1, csv.find('\n', at + 1) - at - 1);
    return std::stod(row.substr(row.rfind(',') + 1)) / 8;
  };
  // The highest peak power per GPU any share runs from 02:00 to 04:00.
  auto highest_in_the_budget_hours = [&](const nlohmann::json& s) {
    double highest = 0;
    for (const auto& k : s["intervals"]) {
      const std::string start = k["start"];
      if (start.find("2026-12-07 02:") != 0 && start.find("2026-12-07 03:") != 0) continue;
      for (const auto& p : k["plans"]) highest = std::max(highest, peak_per_gpu(p["point"].get<int>()));
    }
    return highest;
  };
  auto free = RunWattcut("plan schedule " + d + "/gpt3 --iterations 30000 --start 2026-12-07T00:00Z --deadline " +
                         "2026-12-08T00:00Z --carbon " + d + "/carbon.csv --objective carbon --out " + d + "/free");
  ASSERT_EQ(free.exit_code, 0) << free.err;
  EXPECT_GT(highest_in_the_budget_hours(Schedule("free")), 290);
  auto run = RunWattcut("plan schedule " + d + "/gpt3 --iterations 30000 --start 2026-12-07T00:00Z --deadline " +
                        "2026-12-08T00:00Z --carbon " + d + "/carbon.csv --objective carbon --power-budget " + d +
                        "/budget.csv --out " + d + "/carbon");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json s = Schedule("carbon");
  EXPECT_EQ(s["objective"], "carbon");
  EXPECT_TRUE(s["totals"]["cost"].is_null());
  EXPECT_LT(s["totals"]["carbon_kg"].get<double>(), s["baselines"]["fastest"]["carbon_kg"].get<double>());
  int budgeted = 0;
  for (const auto& k : s["intervals"]) budgeted += k["budget_w"].get<double>() <= 8 * 290 + 1e-6 ? 1 : 0;
  EXPECT_LE(highest_in_the_budget_hours(s), 290);
  EXPECT_EQ(budgeted, 2);
}

TEST_F(PlanScheduleCommand, StartNowReadsTheClockAndAnUnmeetableDeadlineWritesNothing) {
  const std::string d = dir.path();
  const std::time_t now = std::time(nullptr);
  const double before = static_cast<double>(now);
  const std::time_t in_thirty_days = now + 30 * 86400;
  std::tm utc{};
  gmtime_r(&in_thirty_days, &utc);
  char deadline[32];
  std::strftime(deadline, sizeof(deadline), "%Y-%m-%dT%H:%MZ", &utc);
  auto run =
      RunWattcut("plan schedule " + d + "/gpt3 --iterations 1000 --deadline " + deadline + " --out " + d + "/now");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json s = Schedule("now");
  EXPECT_EQ(s["objective"], "energy");  // neither a price nor a carbon series
  EXPECT_GE(s["start_s"].get<double>(), before);
  EXPECT_LE(s["start_s"].get<double>(), static_cast<double>(std::time(nullptr)));
  EXPECT_NE(run.err.find("the deadline does not bind"), std::string::npos) << run.err;

  auto late = RunWattcut("plan schedule " + d + "/gpt3 --iterations 1000000 --start 2026-12-07T00:00Z --deadline " +
                         "2026-12-08T00:00Z --price " + d + "/prices.csv --out " + d + "/late");
  EXPECT_EQ(late.exit_code, 1);
  EXPECT_NE(late.err.find("cannot be met"), std::string::npos) << late.err;
  EXPECT_FALSE(std::ifstream(d + "/late/schedule.json").good());
}

}  // namespace
}  // namespace wattcut
