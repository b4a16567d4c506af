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
constexpr double kA40BlockingPowerW = 70.38;

PlannerOptions Gpt3Options(int microbatches) {
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = kA100BlockingPowerW;
  return options;
}

// AllMax (PERSEUS.md section 7): every computation at the highest frequency, plus each
// stage's blocking energy up to the iteration time `time_s`.
double AllMaxEnergy(const Profile& profile, int microbatches, double time_s, double p2p_power_w) {
  double energy = 0;
  for (int s = 0; s < profile.num_stages(); ++s) {
    double compute_s = 0;
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const Measurement& m = profile.fastest_measurement(s, kind);
      energy += microbatches * m.energy_j;
      compute_s += microbatches * m.time_s;
    }
    energy += p2p_power_w * (time_s - compute_s);
  }
  return energy;
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

// Table 6, first row: intrinsic saving of the fastest plan against AllMax.
TEST(Planner, ReproducesTable6Gpt3A100) {
  WATTCUT_REQUIRE_SHARED_FILE(profile_path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(profile_path, 8);
  ASSERT_TRUE(profile.ok());
  const std::map<int, double> paper = {{12, 15.2}, {24, 14.2}, {48, 13.6}, {96, 13.3}};
  for (auto [microbatches, expected_percent] : paper) {
    Result<Frontier> frontier = ComputeFrontier(*profile, Gpt3Options(microbatches));
    ASSERT_TRUE(frontier.ok()) << frontier.error().message;
    const FrontierPoint& fastest = frontier->points()[frontier->fastest_index()];
    double all_max = AllMaxEnergy(*profile, microbatches, fastest.time_s, kA100BlockingPowerW);
    double saving = 100 * (1 - fastest.energy_j / all_max);
    EXPECT_NEAR(saving, expected_percent, 0.2) << "M = " << microbatches;
  }
}

}  // namespace
}  // namespace wattcut
