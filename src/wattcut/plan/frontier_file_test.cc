#include "wattcut/plan/frontier_file.h"

#include <gtest/gtest.h>

#include <string>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

// Every point and every plan of `b` equals `a`'s.
void ExpectSameFrontier(const Frontier& a, const Frontier& b) {
  ASSERT_EQ(a.points().size(), b.points().size());
  EXPECT_EQ(a.setup().unit_time_s, b.setup().unit_time_s);
  EXPECT_EQ(a.setup().p2p_power_w, b.setup().p2p_power_w);
  EXPECT_EQ(a.setup().schedule, b.setup().schedule);
  EXPECT_EQ(a.setup().options, b.setup().options);
  for (size_t i = 0; i < a.points().size(); ++i) {
    EXPECT_EQ(a.points()[i].duration_units, b.points()[i].duration_units) << i;
    EXPECT_EQ(a.points()[i].time_s, b.points()[i].time_s) << i;
    EXPECT_EQ(a.points()[i].energy_j, b.points()[i].energy_j) << i;
    EXPECT_EQ(a.points()[i].effective_energy_j, b.points()[i].effective_energy_j) << i;
    ASSERT_EQ(a.DurationsAt(i), b.DurationsAt(i)) << i;
  }
  EXPECT_EQ(a.fastest_index(), b.fastest_index());
  EXPECT_EQ(a.min_energy_index(), b.min_energy_index());
}

Frontier Small() {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}},
                    {{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  setup.unit_time_s = 0.001;
  setup.p2p_power_w = 83.64;
  std::vector<std::pair<int64_t, int>> options = {{1, 1410}, {2, 1200}, {4, 900}};
  setup.options = {{options, options}, {options, options}};
  Frontier frontier(setup, {4, 4, 4, 4});
  frontier.AddPoint({16, 0.016, 100.25, 90}, {});
  frontier.AddPoint({15, 0.015, 0.1 + 0.2, 91}, {{0, 3}});
  frontier.AddPoint({14, 0.014, 1.0 / 3, 92}, {{1, 2}, {3, 1}});
  return frontier;
}

TEST(FrontierFile, ASmallFrontierReadsBackExactly) {
  Frontier frontier = Small();
  const std::string text = FrontierFileText(frontier);
  EXPECT_EQ(text.rfind("wattcut.frontier/v1\nunit_time_s 0.001\np2p_power_w 83.64\nstages 2\n", 0), 0u) << text;
  EXPECT_NE(text.find("\nschedule 0 forward:0 backward:0\noptions 0 forward 1:1410 2:1200 4:900\n"), std::string::npos);
  EXPECT_NE(text.find("\nstart 4 4 4 4\npoints 3\np 16 0.016 100.25 90\np 15 0.015 0.30000000000000004 91 0:3\n"),
            std::string::npos)
      << text;
  auto back = ParseFrontierFile(text, "f");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameFrontier(frontier, *back);
  EXPECT_EQ(FrontierFileText(*back), text);
}

TEST(FrontierFile, ThePlannersFrontierReadsBackWithEveryPlan) {
  WATTCUT_REQUIRE_SHARED_FILE(profile_path, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  Result<Profile> profile = ReadProfileCsv(profile_path, 8);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  PlannerOptions options;
  options.num_microbatches = 12;
  options.p2p_power_w = 83.64;
  Result<Frontier> frontier = ComputeFrontier(*profile, options);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  auto back = ParseFrontierFile(FrontierFileText(*frontier), "gpt3.wattcut");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameFrontier(*frontier, *back);
  for (size_t i : {size_t{0}, frontier->min_energy_index(), frontier->fastest_index()}) {
    auto a = frontier->PlanAt(i);
    auto b = back->PlanAt(i);
    ASSERT_EQ(a.stages.size(), b.stages.size());
    for (size_t s = 0; s < a.stages.size(); ++s) {
      for (size_t c = 0; c < a.stages[s].size(); ++c) EXPECT_EQ(a.stages[s][c].freq_mhz, b.stages[s][c].freq_mhz);
    }
  }
}

// Each damaged file is refused with the line and the field.
TEST(FrontierFile, DamageIsNamedByLineAndField) {
  const std::string good = FrontierFileText(Small());
  auto refused = [&](std::string text, const std::string& expected) {
    auto read = ParseFrontierFile(text, "f.wattcut");
    ASSERT_FALSE(read.ok()) << expected;
    EXPECT_EQ(read.error().code, ErrorCode::kCorruption);
    EXPECT_NE(read.error().message.find(expected), std::string::npos) << read.error().message;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  refused("", "f.wattcut:0: expected the format line 'wattcut.frontier/v1'");
  refused(replaced("wattcut.frontier/v1", "wattcut.frontier/v3"), "f.wattcut:1: expected the format line");
  // A v2 reader reads the v1 body as v2: the chunks line is missing.
  refused(replaced("wattcut.frontier/v1", "wattcut.frontier/v2"), "f.wattcut:5: expected a 'chunks' line");
  refused(good.substr(0, good.size() - 4), "f.wattcut:15: the file ends early; expected a 'end' line");
  refused(good.substr(0, good.find("\np 15")), "the file ends early; expected a 'p' line");
  refused(replaced("stages 2", "stages 0"), "f.wattcut:4: stages: expected an integer in [1, 1024], got '0'");
  refused(replaced("start 4 4 4 4", "start 4 4 4"), "f.wattcut:11: start: expected 4 durations");
  refused(replaced("start 4 4 4 4", "start 4 4 -4 4"), "start duration: expected an integer in [0, ");
  refused(replaced(" 0:3\n", " 4:3\n"),
          "f.wattcut:14: change COMPUTATION:DURATION_UNITS: expected A:B with A in [0, 3]");
  refused(replaced(" 0:3\n", " 0:x\n"), "got '0:x'");
  refused(replaced("p 16 0.016 100.25 90", "p 16 0.016 100.25 90 0:1"), "the first point is the start durations");
  refused(replaced("p 16 0.016", "p 16 nan"), "time_s: expected a finite number >= 0, got 'nan'");
  refused(replaced("1:1410 2:1200 4:900\noptions 0 backward", "4:1410 2:1200\noptions 0 backward"),
          "options: durations must not decrease, got 2 after 4");
  refused(replaced("options 0 forward 1:1410 2:1200 4:900", "options 0 forward"),
          "stage 0 runs forward computations but lists no frequency for them");
  refused(replaced("schedule 1 forward:0", "schedule 1 sideways:0"), "schedule: expected INSTRUCTION:MICROBATCH");
  refused(replaced("points 3", "points 4"), "expected a 'p' line, got 'end'");
  refused(good + "p 1 1 1 1\n", "text after the 'end' line");
}

}  // namespace
}  // namespace wattcut
