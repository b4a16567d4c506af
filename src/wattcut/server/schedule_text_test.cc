#include "wattcut/server/schedule_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace wattcut::server {
namespace {

TEST(ScheduleText, AUniformStageListsEveryInstructionInOrder) {
  std::vector<Computation> stage = {
      {InstructionKind::kForward, 0}, {InstructionKind::kForward, 1}, {InstructionKind::kBackward, 0}};
  EXPECT_EQ(UniformStageSchedule(stage, 1410), R"([["forward",1410],["forward",1410],["backward",1410]])");
  EXPECT_EQ(UniformStageSchedule({}, 1410), "[]");
}

TEST(ScheduleText, APlansStagesAreItsFrequencies) {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}},
                    {{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  std::vector<std::pair<int64_t, int>> options = {{1, 1410}, {2, 900}};
  setup.options = {{options, options}, {options, options}};
  Frontier frontier(setup, {2, 2, 2, 2});
  frontier.AddPoint({8, 0.008, 10, 0}, {});
  frontier.AddPoint({7, 0.007, 11, 0}, {{1, 1}, {2, 1}});
  StageSchedules slow = PlanStageSchedules(frontier, 0);
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0], R"([["forward",900],["backward",900]])");
  StageSchedules fast = PlanStageSchedules(frontier, 1);
  EXPECT_EQ(fast[0], R"([["forward",900],["backward",1410]])");
  EXPECT_EQ(fast[1], R"([["forward",1410],["backward",900]])");
}

TEST(ScheduleText, TheReplyIsZeusFrequencySchedule) {
  std::string text = FrequencyScheduleJson(3, R"([["forward",1410]])");
  EXPECT_EQ(text, R"({"rank":3,"frequencies":[["forward",1410]]})");
  auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["rank"], 3);
  EXPECT_EQ(parsed["frequencies"][0][1], 1410);
}

}  // namespace
}  // namespace wattcut::server
