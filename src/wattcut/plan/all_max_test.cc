#include "wattcut/plan/all_max.h"

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

TEST(AllMax, ZeroBubbleSplitsAnUnmeasuredBackwardInHalves) {
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::kZeroBubbleH1, 2, 2);
  // Stage 0: F0 F1 B0 W0 B1 W1; stage 1: F0 B0 F1 B1 W0 W1, B and W 1 s each. Critical path:
  // F0(s0) F0(s1) B0(s1) F1(s1) B1(s1) B1(s0) W1(s0) = 1+1+1+1+1+1+1 (1F1B: 9 s).
  EXPECT_DOUBLE_EQ(AllMaxIterationTime(TwoStageProfile(), schedule), 7.0);
  // The same compute energy as the whole backwards (120 J); each stage computes 6 s of 7 s.
  EXPECT_DOUBLE_EQ(AllMaxEnergy(TwoStageProfile(), schedule, 7.0, 50.0), 120 + 2 * 1 * 50.0);
  // Measured passes are used as measured.
  Profile measured = TwoStageProfile();
  for (int s = 0; s < 2; ++s) {
    measured.mutable_measurements(s, InstructionKind::kBackwardInput) = {{1410, 1.5, 12}};
    measured.mutable_measurements(s, InstructionKind::kBackwardWeight) = {{1410, 0.5, 6}};
  }
  // F0(s0) F0(s1) B0(s1) F1(s1) B1(s1) B1(s0) W1(s0) = 1+1+1.5+1+1.5+1.5+0.5.
  EXPECT_DOUBLE_EQ(AllMaxIterationTime(measured, schedule), 8.0);
}

TEST(AllMax, InterleavedRunsEachChunkAtItsProfileStage) {
  // Two devices x two chunks: profile stages 0..3, each half of a TwoStageProfile stage.
  Profile chunks(4);
  for (int s = 0; s < 4; ++s) {
    chunks.mutable_measurements(s, InstructionKind::kForward) = {{1410, 0.5, 5}};
    chunks.mutable_measurements(s, InstructionKind::kBackward) = {{1410, 1.0, 10}};
  }
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::kInterleaved, 2, 2, 2);
  // Device 0: F0 F1 F0.1 F1.1 B0.1 B1.1 B0 B1; device 1: F0 F1 F0.1 B0.1 F1.1 B1.1 B0 B1.
  // By hand: device 1 runs B0.1 over [2, 3] and F1.1 over [3, 3.5], B1.1 over [3.5, 4.5];
  // device 0's B1.1 follows over [4.5, 5.5], device 1's B1 over [5.5, 6.5] and device 0's
  // B1 over [6.5, 7.5] (1F1B on the unsplit stages: 9 s).
  EXPECT_DOUBLE_EQ(AllMaxIterationTime(chunks, schedule), 7.5);
  // 120 J of compute; each device computes 6 s of 7.5 s.
  EXPECT_DOUBLE_EQ(AllMaxEnergy(chunks, schedule, 7.5, 50.0), 120 + 2 * 1.5 * 50.0);
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
