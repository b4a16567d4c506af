#include "wattcut/plan/frontier.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

// One stage, two microbatches of forwards and backwards; options: duration 1 at
// 1410 MHz, 2 at 1200 MHz, 4 at 900 MHz.
Frontier::Setup SmallSetup() {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0},
                     {InstructionKind::kForward, 1},
                     {InstructionKind::kBackward, 0},
                     {InstructionKind::kBackward, 1}}};
  setup.unit_time_s = 0.001;
  std::vector<std::pair<int64_t, int>> options = {{1, 1410}, {2, 1200}, {4, 900}};
  setup.options = {{options, options}};
  return setup;
}

TEST(Frontier, PlansMapDurationsToTheSlowestFittingFrequency) {
  Frontier frontier(SmallSetup(), {4, 4, 4, 4});
  frontier.AddPoint({16, 0.016, 100, 0}, {});
  frontier.AddPoint({15, 0.015, 101, 0}, {{0, 3}});
  frontier.AddPoint({14, 0.014, 103, 0}, {{1, 2}, {0, 1}});
  EXPECT_EQ(frontier.DurationsAt(0), (std::vector<int64_t>{4, 4, 4, 4}));
  EXPECT_EQ(frontier.DurationsAt(2), (std::vector<int64_t>{1, 2, 4, 4}));
  FrequencyPlan plan = frontier.PlanAt(1);
  ASSERT_EQ(plan.stages.size(), 1u);
  // Duration 3 has no option of its own: the slowest option not longer than 3 is 1200 MHz.
  EXPECT_EQ(plan.stages[0][0].freq_mhz, 1200);
  EXPECT_EQ(plan.stages[0][0].duration_units, 3);
  EXPECT_EQ(plan.stages[0][1].freq_mhz, 900);
  EXPECT_EQ(frontier.PlanAt(2).stages[0][0].freq_mhz, 1410);
  EXPECT_EQ(plan.stages[0][2].kind, InstructionKind::kBackward);
}

TEST(Frontier, StragglerLookupTakesTheCheapestPointNoSlowerThanTPrime) {
  Frontier frontier(SmallSetup(), {4, 4, 4, 4});
  // Energy falls from T_min to T* (index 1), then rises again towards T_max.
  frontier.AddPoint({13, 0.013, 105, 0}, {});
  frontier.AddPoint({12, 0.012, 100, 0}, {{0, 3}});
  frontier.AddPoint({11, 0.011, 110, 0}, {{0, 2}});
  frontier.AddPoint({10, 0.010, 130, 0}, {{0, 1}});
  EXPECT_EQ(frontier.fastest_index(), 3u);
  EXPECT_EQ(frontier.min_energy_index(), 1u);
  EXPECT_EQ(frontier.IndexForIterationTime(0.0105), 3u);  // T' between T_min and the next point
  EXPECT_EQ(frontier.IndexForIterationTime(0.011), 2u);
  EXPECT_EQ(frontier.IndexForIterationTime(0.020), 1u);  // beyond T*: stay at T*
  EXPECT_EQ(frontier.IndexForIterationTime(0.005), 3u);  // faster than T_min: nothing to do
}

TEST(Frontier, CheckpointsGiveTheSameDurationsAsReplayingEveryChange) {
  Frontier::Setup setup = SmallSetup();
  std::vector<int64_t> durations = {4, 4, 4, 4};
  Frontier frontier(setup, durations);
  std::vector<std::vector<int64_t>> expected;
  frontier.AddPoint({1000, 1, 0, 0}, {});
  expected.push_back(durations);
  for (int i = 1; i < 1000; ++i) {
    int32_t c = i % 4;
    durations[static_cast<size_t>(c)] = 1 + (i * 7) % 4;
    frontier.AddPoint({1000 - i, 1, 0, 0}, {{c, durations[static_cast<size_t>(c)]}});
    expected.push_back(durations);
  }
  for (size_t i : {0u, 1u, 255u, 256u, 257u, 511u, 512u, 999u}) {
    EXPECT_EQ(frontier.DurationsAt(i), expected[i]) << "point " << i;
  }
}

}  // namespace
}  // namespace wattcut
