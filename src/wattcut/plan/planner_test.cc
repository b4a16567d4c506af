#include "wattcut/plan/planner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/shared_data_testing.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

constexpr double kA100BlockingPowerW = 83.64;

PlannerOptions Gpt3Options(int microbatches) {
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = kA100BlockingPowerW;
  return options;
}

TEST(Planner, MatchesReferenceFrontierOnGpt3A100) {
  WATTCUT_REQUIRE_SHARED_FILE(profile_path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  WATTCUT_REQUIRE_SHARED_FILE(reference_path,
                              "perseus-sosp24/iteration_time_energy/a100_sxm/gpt3-175b_bf16_mb12.csv");
  Result<Profile> profile = ReadProfileCsv(profile_path, 8);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  Result<Frontier> frontier = ComputeFrontier(*profile, Gpt3Options(12));
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;

  Result<CsvTable> reference = CsvTable::Read(reference_path);
  ASSERT_TRUE(reference.ok());
  std::map<int64_t, double> reference_energy;  // time in ms -> energy
  for (const CsvRow& row : reference->rows()) {
    reference_energy[std::llround(*reference->number(row, 0) * 1000)] = *reference->number(row, 1);
  }
  ASSERT_EQ(reference_energy.size(), 639u);

  std::map<int64_t, double> ours;
  for (const FrontierPoint& p : frontier->points()) ours[p.duration_units] = p.energy_j;
  // Same span: 2.818 s .. 3.456 s, plus our all-slowest start point one unit above.
  EXPECT_EQ(ours.begin()->first, 2818);
  EXPECT_EQ(reference_energy.begin()->first, 2818);
  EXPECT_EQ(ours.rbegin()->first, 3457);
  EXPECT_EQ(frontier->points().size(), 640u);
  double worst = 0;
  for (const auto& [t, e] : reference_energy) {
    ASSERT_TRUE(ours.count(t)) << "no frontier point at " << t << " ms";
    worst = std::max(worst, std::fabs(ours[t] - e) / e);
  }
  EXPECT_LT(worst, 0.005) << "largest relative energy difference from the reference";
  RecordProperty("worst_relative_difference", std::to_string(worst));
}

}  // namespace
}  // namespace wattcut
