#include "wattcut/runtime/frequency_plan_runner.h"

#include <gtest/gtest.h>

#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {
namespace {

TEST(FrequencyPlanRunnerTest, RunsAServerPlanOnASimulatedGpu) {
  auto clock = std::make_shared<ManualClock>();
  auto gpu = std::move(SimulatedBackend::Create("a100-sxm", 1, clock)).value();
  auto setter = std::move(StartThreadFrequencySetter(*gpu, 0)).value();
  auto plan = ParseRankScheduleJson(R"({"rank": 0, "frequencies": [["forward", 1410], ["forward", 1215],
                                       ["backward", 1005], ["backward", 1110]]})",
                                    0);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  FrequencyPlanRunner runner(*setter, plan->entries);
  const GpuModel& model = gpu->model(0);

  // One iteration: every computation runs at the plan's frequency.
  double expected_s = 0;
  for (const ScheduleEntry& entry : plan->entries) {
    ASSERT_TRUE(runner.OnInstructionBegin(entry.instruction).ok());
    ASSERT_TRUE(setter->WaitUntilApplied().ok());  // for the check only; training never waits
    EXPECT_EQ(*gpu->SmClockMhz(0), entry.freq_mhz);
    const InstructionKind kind = *ParseInstruction(entry.instruction);
    ASSERT_TRUE(gpu->Run(0, kind, model.middle_stage.of(kind)).ok());
    expected_s += model.middle_stage.of(kind).time_s * model.RelativeTime(kind, entry.freq_mhz);
  }
  EXPECT_NEAR(clock->NowS(), expected_s, 1e-9);
  ASSERT_TRUE(runner.OnStepEnd().ok());

  // A new plan arrives mid-iteration and starts with the next one.
  ASSERT_TRUE(runner.OnInstructionBegin("forward").ok());
  runner.SetNextSchedule({{"forward", 900}, {"backward", 900}});
  auto wrong = runner.OnInstructionBegin("backward");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "schedule: instruction 2 of 4 is 'forward' in the plan, but the job ran 'backward'");
  for (const char* name : {"forward", "backward", "backward"}) ASSERT_TRUE(runner.OnInstructionBegin(name).ok());
  ASSERT_TRUE(runner.OnStepEnd().ok());
  ASSERT_TRUE(runner.OnInstructionBegin("forward").ok());
  ASSERT_TRUE(setter->WaitUntilApplied().ok());
  EXPECT_EQ(*gpu->SmClockMhz(0), 900);
  ASSERT_TRUE(runner.OnInstructionBegin("backward").ok());
  EXPECT_TRUE(runner.OnStepEnd().ok());
  EXPECT_TRUE(setter->Stop().ok());
  EXPECT_FALSE(gpu->gpu_clocks_locked(0));
}

}  // namespace
}  // namespace wattcut
