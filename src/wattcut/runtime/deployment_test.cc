#include "wattcut/runtime/deployment.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(ParseDeploymentAnswer, ReadsAnUnchangedAnswer) {
  auto answer = ParseDeploymentAnswer(R"({"version": 3, "poll_interval_s": 0.5})", 3);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->version, 3u);
  EXPECT_EQ(answer->poll_interval_s, 0.5);
  EXPECT_FALSE(answer->change.has_value());
}

TEST(ParseDeploymentAnswer, ReadsAPlan) {
  auto answer = ParseDeploymentAnswer(R"({"version": 4, "poll_interval_s": 2, "apply_from_step": 57,
      "mode": "plan", "plan_index": 12, "frequencies": [["forward", 1410], ["backward", 1395]]})",
                                      3);
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->poll_interval_s, 2.0);
  ASSERT_TRUE(answer->change.has_value());
  const RankDeployment& d = *answer->change;
  EXPECT_EQ(d.version, 4u);
  EXPECT_EQ(d.apply_from_step, 57u);
  EXPECT_EQ(d.mode, DeploymentMode::kPlan);
  EXPECT_EQ(d.plan_index, 12);
  EXPECT_EQ(d.frequencies, (std::vector<ScheduleEntry>{{"forward", 1410}, {"backward", 1395}}));
}

TEST(ParseDeploymentAnswer, ReadsAllMaxWithOrWithoutItsInstructions) {
  auto listed = ParseDeploymentAnswer(
      R"({"version": 1, "poll_interval_s": 0.5, "apply_from_step": 0, "mode": "all_max",
          "frequencies": [["forward", 1410]]})",
      0);
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_EQ(listed->change->mode, DeploymentMode::kAllMax);
  EXPECT_EQ(listed->change->plan_index, -1);
  EXPECT_EQ(listed->change->frequencies.size(), 1u);
  auto bare = ParseDeploymentAnswer(R"({"version": 1, "poll_interval_s": 0.5, "apply_from_step": 0,
                                        "mode": "all_max"})",
                                    0);
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_TRUE(bare->change->frequencies.empty());
}

// Each damaged answer is refused with the field and what was expected.
TEST(ParseDeploymentAnswer, NamesTheFieldOfEveryMistake) {
  const std::string plan_tail = R"(, "mode": "plan", "plan_index": 1, "frequencies": [["forward", 1410]]})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "deployment: not valid JSON"},
      {"[1, 2]", "deployment: expected a JSON object, got an array"},
      {R"({"poll_interval_s": 1})", "field 'version': expected an integer >= 0, missing"},
      {R"({"version": -1, "poll_interval_s": 1})", "field 'version': expected an integer >= 0, got -1"},
      {R"({"version": "2", "poll_interval_s": 1})", "field 'version': expected an integer >= 0, got a string"},
      {R"({"version": 2})", "field 'poll_interval_s': expected a number of seconds in (0, 3600], missing"},
      {R"({"version": 2, "poll_interval_s": 0})",
       "field 'poll_interval_s': expected a number of seconds in (0, 3600], got 0"},
      {R"({"version": 2, "poll_interval_s": 1e9})", "field 'poll_interval_s'"},
      {R"({"version": 3, "poll_interval_s": 1})",
       "field 'apply_from_step': expected an integer >= 0 (version 3 is not the rank's 2), missing"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": -4)" + plan_tail,
       "field 'apply_from_step': expected an integer >= 0, got -4"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "fast"})",
       "field 'mode': expected \"plan\" or \"all_max\", got a string"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "frequencies": []})",
       "field 'plan_index': expected an integer >= 0, missing"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "plan_index": 0})",
       "field 'frequencies': expected an array of [\"instruction\", MHz], missing"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "plan_index": 0,
           "frequencies": []})",
       "field 'frequencies': a plan needs at least one instruction, got []"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "plan_index": 0,
           "frequencies": [["forward", 1410], ["backward"]]})",
       "field 'frequencies[1]': expected [\"instruction\", MHz], got [\"backward\"]"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "plan_index": 0,
           "frequencies": [["forward", 0]]})",
       "field 'frequencies[0]': the frequency must be 1..100000 MHz, got 0"},
      {R"({"version": 3, "poll_interval_s": 1, "apply_from_step": 4, "mode": "plan", "plan_index": 0,
           "frequencies": [["", 1410]]})",
       "field 'frequencies[0]': expected [\"instruction\", MHz]"},
  };
  for (const auto& [text, expected] : cases) {
    auto answer = ParseDeploymentAnswer(text, 2);
    ASSERT_FALSE(answer.ok()) << text;
    EXPECT_EQ(answer.error().code, ErrorCode::kMalformed) << text;
    EXPECT_NE(answer.error().message.find(expected), std::string::npos) << text << "\n -> " << answer.error().message;
  }
}

}  // namespace
}  // namespace wattcut
