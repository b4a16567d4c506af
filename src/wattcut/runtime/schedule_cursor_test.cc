#include "wattcut/runtime/schedule_cursor.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

std::vector<ScheduleEntry> Plan() { return {{"forward", 1410}, {"forward", 1200}, {"backward", 1350}}; }

TEST(ScheduleCursorTest, WalksTheIterationAndChecksNames) {
  ScheduleCursor cursor(Plan());
  EXPECT_EQ(*cursor.OnInstructionBegin("forward"), 1410);
  EXPECT_EQ(*cursor.OnInstructionBegin("forward"), 1200);
  auto wrong = cursor.OnInstructionBegin("forward");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, "schedule: instruction 3 of 3 is 'backward' in the plan, but the job ran 'forward'");
  EXPECT_EQ(cursor.position(), 2u);  // a mismatch does not move the cursor
  EXPECT_EQ(*cursor.OnInstructionBegin("backward"), 1350);
  auto extra = cursor.OnInstructionBegin("backward");
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().message, "schedule: the step ran more instructions than the plan's 3 (extra 'backward')");
  EXPECT_TRUE(cursor.OnStepEnd().ok());
  EXPECT_EQ(cursor.steps_completed(), 1u);
  // The next step starts over.
  EXPECT_EQ(*cursor.OnInstructionBegin("forward"), 1410);
}

TEST(ScheduleCursorTest, StepEndFailsUnlessConsumedExactly) {
  ScheduleCursor cursor(Plan());
  ASSERT_TRUE(cursor.OnInstructionBegin("forward").ok());
  Status early = cursor.OnStepEnd();
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().message, "schedule: the step ended after 1 of the plan's 3 instructions");
  EXPECT_EQ(cursor.position(), 0u);
  Status empty = cursor.OnStepEnd();
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "schedule: the step ended after 0 of the plan's 3 instructions");
}

TEST(ScheduleCursorTest, NewPlanWaitsForTheStepBoundary) {
  ScheduleCursor cursor(Plan());
  ASSERT_TRUE(cursor.OnInstructionBegin("forward").ok());
  cursor.SetNextSchedule({{"forward", 900}, {"backward", 1000}});
  // Mid-iteration: still the old plan.
  EXPECT_EQ(*cursor.OnInstructionBegin("forward"), 1200);
  EXPECT_EQ(*cursor.OnInstructionBegin("backward"), 1350);
  ASSERT_TRUE(cursor.OnStepEnd().ok());
  EXPECT_EQ(*cursor.OnInstructionBegin("forward"), 900);
  EXPECT_EQ(*cursor.OnInstructionBegin("backward"), 1000);
  ASSERT_TRUE(cursor.OnStepEnd().ok());

  // Handed over between steps: taken at the next step's first instruction.
  cursor.SetNextSchedule({{"backward", 705}});
  EXPECT_EQ(*cursor.OnInstructionBegin("backward"), 705);
  EXPECT_TRUE(cursor.OnStepEnd().ok());
}

TEST(ScheduleCursorTest, BeginStepShowsANewPlanOnlyAtAStepBoundary) {
  ScheduleCursor cursor({});
  EXPECT_TRUE(cursor.schedule().empty());
  cursor.SetNextSchedule(Plan());
  cursor.BeginStep();
  EXPECT_EQ(cursor.schedule(), Plan());
  ASSERT_TRUE(cursor.OnInstructionBegin("forward").ok());
  cursor.SetNextSchedule({{"forward", 900}});
  cursor.BeginStep();  // mid-step: ignored
  EXPECT_EQ(cursor.schedule(), Plan());
}

TEST(ScheduleCursorTest, ParsesTheServersJson) {
  auto parsed = ParseRankScheduleJson(R"({"rank": 3, "frequencies": [["forward", 1410], ["backward", 1200]]})", 3);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->rank, 3);
  EXPECT_EQ(parsed->entries, (std::vector<ScheduleEntry>{{"forward", 1410}, {"backward", 1200}}));

  const std::pair<const char*, const char*> bad[] = {
      {"{", "schedule: not valid JSON"},
      {"[]", "schedule: expected a JSON object {\"rank\": N, \"frequencies\": [...]}"},
      {R"({"frequencies": []})", "schedule: missing integer \"rank\""},
      {R"({"rank": 1})", "schedule: missing array \"frequencies\""},
      {R"({"rank": 1, "frequencies": []})", "schedule: \"frequencies\" is empty"},
      {R"({"rank": 1, "frequencies": [["forward"]]})", "schedule: frequencies[0]: expected [\"instruction\", MHz]"},
      {R"({"rank": 1, "frequencies": [["forward", 1410], ["backward", "x"]]})",
       "schedule: frequencies[1]: expected [\"instruction\", MHz]"},
      {R"({"rank": 1, "frequencies": [["forward", 0]]})",
       "schedule: frequencies[0]: frequency must be positive, got 0"},
      {R"({"rank": 2, "frequencies": [["forward", 1410]]})", "schedule: it is for rank 2, this is rank 1"},
  };
  for (const auto& [json, message] : bad) {
    auto result = ParseRankScheduleJson(json, 1);
    ASSERT_FALSE(result.ok()) << json;
    EXPECT_EQ(result.error().message, message) << json;
  }
}

}  // namespace
}  // namespace wattcut
