#include "wattcut/emulate/all_max.h"

#include <gtest/gtest.h>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

Profile TwoStageProfile() {
  Profile profile(2);
  for (int s = 0; s < 2; ++s) {
    profile.mutable_measurements(s, InstructionKind::kForward) = {{1410, 1.0, 10}, {1000, 1.5, 8}};
    profile.mutable_measurements(s, InstructionKind::kBackward) = {{1410, 2.0, 20}, {1000, 3.0, 16}};
  }
  return profile;
}

TEST(AllMax, IterationTimeIsTheLongestPathAtMaxFrequency) {
  Profile profile = TwoStageProfile();
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 2, 2);
  // Stage 0: F0 F1 ... ; stage 1: F0 B0 F1 B1. Critical path: F0(s0) F0(s1) B0(s1) F1(s1) B1(s1) B1(s0) = 1+1+2+1+2+2.
  EXPECT_DOUBLE_EQ(AllMaxIterationTime(profile, schedule), 9.0);
}

TEST(AllMax, EnergyAddsBlockingUntilTheIterationEnds) {
  Profile profile = TwoStageProfile();
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 2, 2);
  // Compute: 2 stages x (2 x 10 + 2 x 20) = 120 J; each stage computes 6 s of 10 s.
  EXPECT_DOUBLE_EQ(AllMaxEnergy(profile, schedule, 10.0, 50.0), 120 + 2 * 4 * 50.0);
}

TEST(AllMax, MatchesTheSharedDataReadmeCheck) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(path, 8);
  ASSERT_TRUE(profile.ok());
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 8, 12);
  // README: every computation at 1410 MHz plus blocking energy up to 2.818 s is 7326.61 J.
  EXPECT_NEAR(AllMaxEnergy(*profile, schedule, 2.818, 83.64), 7326.61, 0.01);
}

}  // namespace
}  // namespace wattcut
