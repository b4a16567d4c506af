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
  WATTCUT_REQUIRE_SHARED_FILE(reference_path, "perseus-sosp24/iteration_time_energy/a100_sxm/gpt3-175b_bf16_mb12.csv");
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

// A small two-stage profile: three frequencies per (stage, instruction), times scaled by
// `time_scale`.
Profile SmallProfile(double time_scale, double energy_scale = 1.0) {
  Profile profile(2);
  for (int s = 0; s < 2; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const double t = kind == InstructionKind::kForward ? 0.05 : 0.09;
      profile.mutable_measurements(s, kind) = {{1410, t * time_scale, 24 * energy_scale},
                                               {1200, 1.2 * t * time_scale, 21 * energy_scale},
                                               {1000, 1.5 * t * time_scale, 19 * energy_scale}};
    }
  }
  return profile;
}

PlannerOptions SmallOptions(int microbatches = 4) {
  PlannerOptions options;
  options.num_microbatches = microbatches;
  options.p2p_power_w = 80;
  options.cost_model = CostModelKind::kConvexHull;
  return options;
}

TEST(Planner, SmallProfilePlans) {
  Result<Frontier> frontier = ComputeFrontier(SmallProfile(1), SmallOptions());
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  EXPECT_GT(frontier->points().size(), 10u);
}

// The pipeline's shape is checked before a schedule is built (30,000 microbatches on 8
// stages crashed the solver; 100,000 stages too).
TEST(Planner, RefusesPipelinesOverTheLimitsBeforeBuildingThem) {
  Result<PlanningProblem> microbatches = BuildPlanningProblem(SmallProfile(1), SmallOptions(30000));
  ASSERT_FALSE(microbatches.ok());
  EXPECT_EQ(microbatches.error().message, "microbatches must be in [1, 16384], got 30000");
  Result<PlanningProblem> none = BuildPlanningProblem(SmallProfile(1), SmallOptions(0));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "microbatches must be in [1, 16384], got 0");
  Profile wide(100000);
  for (int s = 0; s < wide.num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      wide.mutable_measurements(s, kind) = {{1410, 0.05, 20}};
    }
  }
  Result<PlanningProblem> stages = BuildPlanningProblem(wide, SmallOptions(4));
  ASSERT_FALSE(stages.ok());
  EXPECT_EQ(stages.error().message, "pipeline stages must be in [1, 1024], got 100000");
  // 2 stages x 16384 microbatches: within the limits (one option per pair, so one point).
  Profile fixed(2);
  for (int s = 0; s < 2; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      fixed.mutable_measurements(s, kind) = {{1410, 0.05, 20}};
    }
  }
  Result<PlanningProblem> most = BuildPlanningProblem(fixed, SmallOptions(16384));
  ASSERT_TRUE(most.ok()) << most.error().message;
  EXPECT_EQ(most->problem.num_activities(), 2 * 2 * 16384);
}

// Times x 1e9 (or a unit time of 1e-9 s) once allocated many GB of cost tables before a
// check ran; now the table size is known from the quantised durations first.
TEST(Planner, RefusesAUnitTimeTooFineBeforeAllocatingTheTables) {
  PlannerOptions fine = SmallOptions();
  fine.unit_time_s = 1e-9;
  Result<PlanningProblem> problem = BuildPlanningProblem(SmallProfile(1), fine);
  ASSERT_FALSE(problem.ok());
  const std::string& message = problem.error().message;
  EXPECT_EQ(message.rfind("unit_time_s 1e-09 s is too fine for this profile: its cost tables would have ", 0), 0u)
      << message;
  EXPECT_NE(message.find("more than the limit of 16777216; use a unit time of "), std::string::npos) << message;
  Result<PlanningProblem> scaled = BuildPlanningProblem(SmallProfile(1e9), SmallOptions());
  ASSERT_FALSE(scaled.ok());
  EXPECT_NE(scaled.error().message.find("is too fine for this profile"), std::string::npos) << scaled.error().message;
}

// A frontier with more points than the limits allow is refused before solving, with a
// unit time that fits.
TEST(Planner, RefusesAFrontierOverTheLimitsBeforeSolving) {
  PlannerOptions options = SmallOptions(64);
  options.unit_time_s = 1e-6;
  Result<PlanningProblem> fine = BuildPlanningProblem(SmallProfile(1), options);
  ASSERT_FALSE(fine.ok());
  const std::string& message = fine.error().message;
  EXPECT_EQ(message.rfind("the frontier would have up to ", 0), 0u) << message;
  EXPECT_NE(message.find(" points (one per unit time of 1e-06 s between the slowest and the fastest iteration) over "
                         "256 computations; the limits are 1000000 points and points x computations <= 1e+09: use a "
                         "unit time of about "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(" s or coarser, or fewer microbatches"), std::string::npos) << message;
  // So many microbatches that no unit time would do.
  options = SmallOptions(16384);
  options.unit_time_s = 1e-5;
  Result<PlanningProblem> many = BuildPlanningProblem(SmallProfile(1), options);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.error().message.find(": use fewer microbatches (a unit time coarse enough, about "), std::string::npos)
      << many.error().message;
  EXPECT_NE(many.error().message.find(" s, is longer than the fastest computation, 0.05 s)"), std::string::npos);
}

// Times of 1e308 once quantised to -9223372036854775808 units and gave a NaN frontier; a
// unit time above every time gave a one-point frontier at 0 s.
TEST(Planner, RefusesDurationsThatOverflowOrRoundToZero) {
  Profile huge = SmallProfile(1);
  // Not dominated (the least energy), so it is quantised.
  huge.mutable_measurements(1, InstructionKind::kBackward)[1] = {1200, 1e308, 1.0};
  Result<PlanningProblem> overflow = BuildPlanningProblem(huge, SmallOptions());
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message,
            "stage 1 backward: the time at 1200 MHz (1e+308 s) is inf unit times of 0.001 s, more than the 2^53 a "
            "duration may have: use a coarser unit time");
  PlannerOptions coarse = SmallOptions();
  coarse.unit_time_s = 1e9;
  Result<PlanningProblem> zero = BuildPlanningProblem(SmallProfile(1), coarse);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message,
            "stage 0 forward: the time at 1410 MHz (0.05 s) is shorter than one unit time (1e+09 s) and would "
            "take 0 units: use a unit time of at most 0.05 s");
  Profile tiny = SmallProfile(1);
  tiny.mutable_measurements(0, InstructionKind::kBackward)[0].time_s = 0.0004;
  Result<PlanningProblem> below = BuildPlanningProblem(tiny, SmallOptions());
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.error().message.rfind("stage 0 backward: the time at 1410 MHz (0.0004 s) is shorter than one unit "
                                        "time (0.001 s)",
                                        0),
            0u)
      << below.error().message;
}

TEST(Planner, RefusesEnergiesTooLargeToAdd) {
  Result<PlanningProblem> problem = BuildPlanningProblem(SmallProfile(1, 1e300), SmallOptions());
  ASSERT_FALSE(problem.ok());
  EXPECT_EQ(problem.error().message.rfind("the profile's energies are too large to plan with", 0), 0u)
      << problem.error().message;
  PlannerOptions power = SmallOptions();
  power.p2p_power_w = 1e308;
  Result<PlanningProblem> blocking = BuildPlanningProblem(SmallProfile(1), power);
  ASSERT_FALSE(blocking.ok());
  EXPECT_EQ(blocking.error().message.rfind("stage 0 forward: the effective energy at 1410 MHz", 0), 0u)
      << blocking.error().message;
}

TEST(Planner, OptionMessagesNameTheFields) {
  PlannerOptions options = SmallOptions();
  options.unit_time_s = 0;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message,
            "unit_time_s must be a positive number of seconds");
  options = SmallOptions();
  options.noise_factor = 2;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message, "noise_factor must be in (0, 1]");
  options = SmallOptions();
  options.p2p_power_w = -1;
  EXPECT_EQ(BuildPlanningProblem(SmallProfile(1), options).error().message,
            "p2p_power_w must be a non-negative number of watts");
}

}  // namespace
}  // namespace wattcut
