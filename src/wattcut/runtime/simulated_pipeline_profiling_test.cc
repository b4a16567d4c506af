#include "wattcut/runtime/simulated_pipeline_profiling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut {
namespace {

// A short sweep: 1410, 1320, ..., 870 MHz (7 frequencies), one measured iteration each.
SimulatedPipelineProfilingOptions ShortSweep(int stages) {
  SimulatedPipelineProfilingOptions options;
  options.gpu_model = "a100-sxm";
  options.stages = stages;
  options.microbatches = 2;
  options.profiler.floor_mhz = 855;
  options.profiler.step_mhz = 90;
  options.profiler.warmup_iterations = 1;
  options.profiler.measured_iterations = 1;
  return options;
}

const ProfiledRow& RowOf(const std::vector<ProfiledRow>& rows, int stage, const std::string& instruction,
                         int freq_mhz) {
  auto it = std::find_if(rows.begin(), rows.end(), [&](const ProfiledRow& r) {
    return r.stage == stage && r.instruction == instruction && r.freq_mhz == freq_mhz;
  });
  EXPECT_NE(it, rows.end()) << stage << " " << instruction << " " << freq_mhz;
  return *it;
}

TEST(SimulatedPipelineProfilingTest, ProfilesEveryStageIntoOneCsvThePlannerReads) {
  std::vector<ProfiledStageSummary> progress;
  auto profile = ProfileSimulatedPipeline(ShortSweep(3), [&](const ProfiledStageSummary& s) { progress.push_back(s); });
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->stages.size(), 3u);
  ASSERT_EQ(progress.size(), 3u);
  for (int stage = 0; stage < 3; ++stage) {
    const ProfiledStageSummary& summary = profile->stages[static_cast<size_t>(stage)];
    EXPECT_EQ(summary.stage, stage);
    EXPECT_EQ(progress[static_cast<size_t>(stage)].stage, stage);
    EXPECT_EQ(summary.frequencies, 7);
    EXPECT_GT(summary.simulated_time_s, 0);
  }
  // 3 stages x 7 frequencies x (forward, backward), stage by stage.
  ASSERT_EQ(profile->rows.size(), 42u);
  EXPECT_TRUE(std::is_sorted(profile->rows.begin(), profile->rows.end(),
                             [](const ProfiledRow& a, const ProfiledRow& b) { return a.stage < b.stage; }));
  for (const ProfiledRow& row : profile->rows) EXPECT_EQ(row.samples, 2) << row.stage << " " << row.freq_mhz;

  // One header, then one line per row.
  const std::string& csv = profile->csv;
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "stage,instruction,frequency,time,energy,samples,time_std,energy_std");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 43);
  EXPECT_EQ(csv.find("stage,", 1), std::string::npos);
  auto read = ParseProfileCsv(csv, "profiled.csv", 3);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->num_stages(), 3);
  EXPECT_EQ(read->measurements(2, InstructionKind::kBackward).size(), 7u);
}

TEST(SimulatedPipelineProfilingTest, TheLastStageRunsTheModelsLastStageWorkload) {
  auto profile = ProfileSimulatedPipeline(ShortSweep(2));
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  const GpuModel& model = **FindGpuModel("a100-sxm");
  for (const char* instruction : {"forward", "backward"}) {
    const InstructionKind kind = *ParseInstruction(instruction);
    const double middle_s = RowOf(profile->rows, 0, instruction, 1410).time_s;
    const double last_s = RowOf(profile->rows, 1, instruction, 1410).time_s;
    EXPECT_NEAR(middle_s / model.middle_stage.of(kind).time_s, 1.0, 0.02) << instruction;
    EXPECT_NEAR(last_s / model.last_stage.of(kind).time_s, 1.0, 0.02) << instruction;
    // Slower at a lower clock, as the model says.
    const double at_870_s = RowOf(profile->rows, 0, instruction, 870).time_s;
    EXPECT_NEAR(at_870_s / middle_s, model.RelativeTime(kind, 870), 0.02) << instruction;
  }
}

TEST(SimulatedPipelineProfilingTest, SimulatedTimeGivesTheSameProfileEveryRun) {
  auto first = ProfileSimulatedPipeline(ShortSweep(2));
  auto second = ProfileSimulatedPipeline(ShortSweep(2));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->csv, second->csv);
  EXPECT_EQ(first->stages[1].simulated_time_s, second->stages[1].simulated_time_s);
}

TEST(SimulatedPipelineProfilingTest, OptionsThatCannotRunAreErrors) {
  auto expect_error = [](const SimulatedPipelineProfilingOptions& options, const std::string& text) {
    int stages_seen = 0;
    auto profile = ProfileSimulatedPipeline(options, [&](const ProfiledStageSummary&) { ++stages_seen; });
    ASSERT_FALSE(profile.ok()) << text;
    EXPECT_NE(profile.error().message.find(text), std::string::npos) << profile.error().message;
    EXPECT_EQ(stages_seen, 0);
  };
  SimulatedPipelineProfilingOptions options = ShortSweep(2);
  options.stages = 0;
  expect_error(options, "stages and microbatches must be >= 1");
  options = ShortSweep(2);
  options.microbatches = 0;
  expect_error(options, "stages and microbatches must be >= 1");
  options = ShortSweep(2);
  options.gpu_model = "h100";
  expect_error(options, "h100");
  options = ShortSweep(2);
  options.profiler.floor_mhz = 1500;  // above every supported clock
  expect_error(options, "profiler: no supported SM clock between 1500 and 1410 MHz");
  options = ShortSweep(2);
  options.profiler.measured_iterations = 0;
  expect_error(options, "profiler: needs warmup_iterations >= 0 and measured_iterations >= 1");
}

}  // namespace
}  // namespace wattcut
