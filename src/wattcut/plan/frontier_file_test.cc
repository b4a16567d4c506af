#include "wattcut/plan/frontier_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <string>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"
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
    EXPECT_EQ(a.points()[i].peak_1s_power_w, b.points()[i].peak_1s_power_w) << i;
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
  // The schedules as a whole, and the points' order (each was once printed as a plan).
  refused(replaced("schedule 1 forward:0", "schedule 1 forward:9"),
          "f.wattcut: the schedule lines do not make a pipeline schedule: ");
  refused(replaced("schedule 0 forward:0 backward:0", "schedule 0 forward:0 forward:0"),
          "the schedule lines do not make a pipeline schedule");
  refused(replaced("schedule 0 forward:0 backward:0", "schedule 0 backward:0 forward:0"),
          "the schedule lines do not make a pipeline schedule");
  refused(
      replaced("p 15 0.015", "p 17 0.015"),
      "f.wattcut:14: p: points run slowest first: expected duration_units below 16 and time_s at most 0.016, got 17");
  refused(replaced("p 15 0.015", "p 15 0.017"), "got 15 and 0.017");
  refused(good + "p 1 1 1 1\n", "text after the 'end' line");
}

// Every plan of a frontier of more than 10,000 points (the built-in A40 model, 8 stages x 24
// microbatches at 0.2 ms) reads back exactly: every point's durations and frequencies.
TEST(FrontierFile, EveryPlanOfALargeFrontierReadsBack) {
  PlannerOptions options;
  options.num_microbatches = 24;
  options.unit_time_s = 0.0002;
  options.p2p_power_w = (*FindGpuModel("a40"))->p2p_power_w;
  Result<Frontier> frontier = ComputeFrontier(MakeModelProfile(**FindGpuModel("a40"), 8), options);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  ASSERT_GT(frontier->points().size(), 10000u);
  for (size_t i = 0; i < frontier->points().size(); ++i) frontier->SetPeakPower(i, 1000.0 + 1.0 / (1 + i));
  const std::string text = FrontierFileText(*frontier);
  auto back = ParseFrontierFile(text, "a40.wattcut");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameFrontier(*frontier, *back);
  for (size_t i = 0; i < frontier->points().size(); ++i) {
    FrequencyPlan a = frontier->PlanAt(i);
    FrequencyPlan b = back->PlanAt(i);
    ASSERT_EQ(a.stages.size(), b.stages.size()) << i;
    for (size_t s = 0; s < a.stages.size(); ++s) {
      ASSERT_EQ(a.stages[s].size(), b.stages[s].size()) << i;
      for (size_t c = 0; c < a.stages[s].size(); ++c) {
        const PlannedComputation& x = a.stages[s][c];
        const PlannedComputation& y = b.stages[s][c];
        ASSERT_TRUE(x.kind == y.kind && x.microbatch == y.microbatch && x.freq_mhz == y.freq_mhz &&
                    x.duration_units == y.duration_units && x.chunk == y.chunk)
            << "point " << i << " stage " << s << " computation " << c;
      }
    }
  }
  EXPECT_LT(static_cast<double>(text.size()) / static_cast<double>(frontier->points().size()), 200.0);
}

// The peak 1-s power is an optional line before 'end': written when every point has it, read
// back exactly, and a file without it (as written before it existed) still reads.
TEST(FrontierFile, ThePeakPowerLineIsOptional) {
  Frontier frontier = Small();
  const std::string without = FrontierFileText(frontier);
  EXPECT_EQ(without.find("peak_1s_power_w"), std::string::npos);
  auto old = ParseFrontierFile(without, "old.wattcut");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_FALSE(old->points()[0].peak_1s_power_w.has_value());

  frontier.SetPeakPower(0, 250.5);
  frontier.SetPeakPower(1, 0.1 + 0.2);
  EXPECT_EQ(FrontierFileText(frontier), without) << "written only when every point has it";
  frontier.SetPeakPower(2, 300);
  const std::string with = FrontierFileText(frontier);
  EXPECT_NE(with.find("\npeak_1s_power_w 250.5 0.30000000000000004 300\nend\n"), std::string::npos) << with;
  auto back = ParseFrontierFile(with, "new.wattcut");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameFrontier(frontier, *back);
  EXPECT_EQ(FrontierFileText(*back), with);

  auto refused = [&](const std::string& from, const std::string& to, const std::string& expected) {
    std::string text = with;
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    auto read = ParseFrontierFile(text.replace(at, from.size(), to), "f.wattcut");
    ASSERT_FALSE(read.ok()) << expected;
    EXPECT_EQ(read.error().code, ErrorCode::kCorruption);
    EXPECT_EQ(read.error().message, expected);
  };
  refused("peak_1s_power_w 250.5 0.30000000000000004 300", "peak_1s_power_w 250.5 300",
          "f.wattcut:16: peak_1s_power_w: expected 3 powers (one per point), got 2");
  refused(" 300\nend", " inf\nend", "f.wattcut:16: peak_1s_power_w: expected a finite number >= 0, got 'inf'");
  refused(" 300\nend\n", " 300\n", "f.wattcut:16: the file ends early; expected a 'end' line");
  refused("\nend\n", "\nen\n", "f.wattcut:17: expected a 'end' line, got 'en'");
  refused("\nend\n", "\nend 1\n", "f.wattcut:17: end: expected nothing after 'end', got '1'");
}

// A FIFO named as the frontier once hung the reader (open waits for a writer): only a regular
// file is read.
TEST(FrontierFile, AFifoIsRefusedNotWaitedOn) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("wattcut_frontier_fifo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "frontier.wattcut").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = ReadFrontierFile(fifo);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, fifo + ": is not a regular file, expected a frontier file");
  EXPECT_FALSE(ReadFrontierFile(dir.string()).ok()) << "nor as its folder's frontier.wattcut";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut
