#include "wattcut/plan/frontier_power.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "wattcut/plan/pipeline_execution.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

// The peak window power of a plan computed the slow way: ExecutePipeline's timings, the
// power of every unit time summed from the cost tables, and every integer window start
// over two iterations back to back (the window is a whole number of units, so the best
// window starts at an integer).
double BruteForcePeak(const Frontier& frontier, const TimeCostProblem& problem, size_t index, int64_t window_units) {
  const auto& schedule = frontier.setup().schedule;
  const double u = frontier.setup().unit_time_s;
  const std::vector<int64_t> durations = frontier.DurationsAt(index);
  std::vector<std::vector<double>> seconds(schedule.size());
  size_t flat = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (size_t i = 0; i < schedule[s].size(); ++i) seconds[s].push_back(static_cast<double>(durations[flat++]) * u);
  }
  PipelineExecution execution = ExecutePipeline(schedule, seconds);
  const auto period = static_cast<int64_t>(std::llround(execution.iteration_time_s / u));
  EXPECT_EQ(period, frontier.points()[index].duration_units);
  const double blocking = static_cast<double>(schedule.size()) * frontier.setup().p2p_power_w;
  std::vector<double> power(static_cast<size_t>(period), blocking);
  flat = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (size_t i = 0; i < schedule[s].size(); ++i, ++flat) {
      const int64_t d = durations[flat];
      const double excess = problem.table_of(static_cast<int>(flat)).at(d) / (static_cast<double>(d) * u);
      const auto start = static_cast<int64_t>(std::llround(execution.timing[s][i].start_s / u));
      for (int64_t t = start; t < start + d; ++t) power[static_cast<size_t>(t)] += excess;
    }
  }
  // Periodic prefix sums over enough iterations for any window.
  const int64_t span = period + window_units;
  std::vector<double> prefix(static_cast<size_t>(span) + 1, 0.0);
  for (int64_t t = 0; t < span; ++t) {
    prefix[static_cast<size_t>(t) + 1] = prefix[static_cast<size_t>(t)] + power[static_cast<size_t>(t % period)];
  }
  double best = 0;
  for (int64_t a = 0; a < period; ++a) {
    best = std::max(best, prefix[static_cast<size_t>(a + window_units)] - prefix[static_cast<size_t>(a)]);
  }
  return best / static_cast<double>(window_units);
}

struct Planned {
  PlanningProblem planning;
  Frontier frontier;
};

// A small frontier of the built-in A100 model: 4 stages, 4 microbatches, 10 ms unit time.
Planned SmallPlanned() {
  PlannerOptions options;
  options.num_microbatches = 4;
  options.unit_time_s = 0.01;
  options.p2p_power_w = 83.64;
  Profile profile = MakeModelProfile(**FindGpuModel("a100-sxm"), 4);
  return Planned{*BuildPlanningProblem(profile, options), *ComputeFrontier(profile, options)};
}

TEST(FrontierPower, ATwoStageTimelineByHand) {
  // Stage 0: F (2 units) then B (3 units); stage 1: F (1 unit) then B (2 units). 1F1B with
  // one microbatch: F0 0-2, F1 2-3, B1 3-5, B0 5-8. Unit 1 s; blocking power 10 W a GPU.
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}},
                    {{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  setup.unit_time_s = 1;
  setup.p2p_power_w = 10;
  setup.options = {{{{2, 1000}}, {{3, 1000}}}, {{{1, 1000}}, {{2, 1000}}}};
  Frontier frontier(setup, {2, 3, 1, 2});
  // Effective costs: 40 J for 2 units (20 W above blocking), 30 J for 3 (10 W), 50 J for 1
  // (50 W), 60 J for 2 (30 W). Energy: 180 J + 2 GPUs * 8 s * 10 W = 340 J.
  frontier.AddPoint({8, 8, 340, 180}, {});
  TimeCostProblem problem;
  problem.precedences = {{0, 1}, {2, 3}, {0, 2}, {3, 1}};
  problem.cost_table = {0, 1, 2, 3};
  problem.cost_tables = {{2, 2, {40}}, {3, 3, {30}}, {1, 1, {50}}, {2, 2, {60}}};
  auto power = FrontierPower::Create(frontier, problem);
  ASSERT_TRUE(power.ok()) << power.error().message;
  auto timeline = power->Timeline(frontier.DurationsAt(0));
  ASSERT_TRUE(timeline.ok()) << timeline.error().message;
  EXPECT_EQ(timeline->time_s, (std::vector<double>{0, 2, 3, 5, 8}));
  EXPECT_EQ(timeline->power_w, (std::vector<double>{40, 70, 50, 30}));
  // 1-s windows: the largest is 70 W; 2 s: [2, 4] gives (70 + 50) / 2; 3 s: [2, 5] gives 56.67;
  // 8 s: one iteration, the average 42.5 W; 10 s: an iteration and [2, 4] again.
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 1), 70);
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 2), 60);
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 3), 170.0 / 3);
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 8), 340.0 / 8);
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 10), (340.0 + 120) / 10);
  // Windows that do not start or end at a step: 2.5 s, best [2, 4.5]; 7.5 s leaves out the
  // cheapest half second, inside [5, 8].
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 2.5), (70.0 + 50 + 0.5 * 50) / 2.5);
  EXPECT_DOUBLE_EQ(*power->PeakPower(frontier.DurationsAt(0), 7.5), (340.0 - 0.5 * 30) / 7.5);
}

TEST(FrontierPower, WindowsSpanTheIterationBoundary) {
  // One stage, four computations of 1 unit: 100 W, 0, 0, 100 W (no blocking power). Within
  // one iteration no 2-unit window holds more than 100 J; the last unit of one iteration and
  // the first of the next hold 200 J.
  const auto F = InstructionKind::kForward;
  const auto B = InstructionKind::kBackward;
  Frontier::Setup setup;
  setup.schedule = {{{F, 0}, {F, 1}, {B, 0}, {B, 1}}};
  setup.unit_time_s = 1;
  setup.p2p_power_w = 0;
  setup.options = {{{{1, 1000}}, {{1, 1000}}}};
  Frontier frontier(setup, {1, 1, 1, 1});
  frontier.AddPoint({4, 4, 200, 200}, {});
  TimeCostProblem problem;
  problem.precedences = {{0, 1}, {1, 2}, {2, 3}};
  problem.cost_table = {0, 1, 1, 0};
  problem.cost_tables = {{1, 1, {100}}, {1, 1, {0}}};
  auto power = FrontierPower::Create(frontier, problem);
  ASSERT_TRUE(power.ok());
  const std::vector<int64_t> durations = frontier.DurationsAt(0);
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 1), 100);
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 2), 100);    // [3, 5]
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 1.5), 100);  // [3, 4.5]: 100 + 50 J
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 3), 200.0 / 3);
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 4), 50);         // one iteration: the average
  EXPECT_DOUBLE_EQ(*power->PeakPower(durations, 6), 400.0 / 6);  // one iteration and [3, 5]
}

TEST(FrontierPower, EveryPointMatchesTheEmulatorsTimelineAndItsEnergy) {
  Planned p = SmallPlanned();
  ASSERT_GT(p.frontier.points().size(), 20u);
  auto power = FrontierPower::Create(p.frontier, p.planning.problem);
  ASSERT_TRUE(power.ok()) << power.error().message;
  // Windows of 0.5 s (shorter than an iteration) and of 1 s and 7.3 s (longer).
  for (double window_s : {0.5, 1.0, 7.3}) {
    Frontier frontier = p.frontier;
    ASSERT_TRUE(power->SetPeakPowers(frontier, window_s).ok());
    const auto window_units = static_cast<int64_t>(std::llround(window_s / 0.01));
    for (size_t i = 0; i < frontier.points().size(); ++i) {
      const FrontierPoint& point = frontier.points()[i];
      ASSERT_TRUE(point.peak_1s_power_w.has_value());
      const double expected = BruteForcePeak(frontier, p.planning.problem, i, window_units);
      EXPECT_NEAR(*point.peak_1s_power_w, expected, 1e-9 * expected) << "point " << i << " window " << window_s;
      EXPECT_GE(*point.peak_1s_power_w, point.energy_j / point.time_s * (1 - 1e-12)) << i;
    }
  }
  // One iteration's integral of the timeline is the point's energy.
  for (size_t i = 0; i < p.frontier.points().size(); ++i) {
    auto timeline = power->Timeline(p.frontier.DurationsAt(i));
    ASSERT_TRUE(timeline.ok());
    double energy = 0;
    for (size_t j = 0; j < timeline->power_w.size(); ++j) {
      energy += timeline->power_w[j] * (timeline->time_s[j + 1] - timeline->time_s[j]);
    }
    EXPECT_NEAR(energy, p.frontier.points()[i].energy_j, 1e-9 * energy) << i;
    EXPECT_NEAR(timeline->time_s.back(), p.frontier.points()[i].time_s, 1e-12) << i;
  }
}

// Ranges of points on several threads give every point the same power as one sweep.
TEST(FrontierPower, ThreadsGiveTheSamePowers) {
  PlannerOptions options;
  options.num_microbatches = 12;
  options.unit_time_s = 0.0002;
  options.p2p_power_w = 83.64;
  Profile profile = MakeModelProfile(**FindGpuModel("a100-sxm"), 8);
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  Result<Frontier> frontier = ComputeFrontier(profile, options);
  ASSERT_TRUE(planning.ok() && frontier.ok());
  ASSERT_GT(frontier->points().size(), 3000u);
  auto power = FrontierPower::Create(*frontier, planning->problem);
  ASSERT_TRUE(power.ok());
  Frontier one = *frontier;
  Frontier three = *frontier;
  ASSERT_TRUE(power->SetPeakPowers(one, 1.0, 1).ok());
  ASSERT_TRUE(power->SetPeakPowers(three, 1.0, 3).ok());
  for (size_t i = 0; i < one.points().size(); ++i) {
    ASSERT_TRUE(three.points()[i].peak_1s_power_w.has_value()) << i;
    ASSERT_EQ(one.points()[i].peak_1s_power_w, three.points()[i].peak_1s_power_w) << i;
    ASSERT_EQ(one.points()[i].peak_1s_power_w, power->PeakPower(one.DurationsAt(i)).value()) << i;
  }
}

TEST(FrontierPower, MismatchedProblemsAreRefused) {
  Planned p = SmallPlanned();
  TimeCostProblem other = p.planning.problem;
  other.cost_table.pop_back();
  auto refused = FrontierPower::Create(p.frontier, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("the planning problem has"), std::string::npos);
  TimeCostProblem cyclic = p.planning.problem;
  cyclic.precedences.emplace_back(cyclic.precedences.front().second, cyclic.precedences.front().first);
  auto cycle = FrontierPower::Create(p.frontier, cyclic);
  ASSERT_FALSE(cycle.ok());
  EXPECT_EQ(cycle.error().message, "power: the computations' dependencies are cyclic");
  auto power = FrontierPower::Create(p.frontier, p.planning.problem);
  ASSERT_TRUE(power.ok());
  EXPECT_FALSE(power->PeakPower(p.frontier.DurationsAt(0), 0).ok());
  std::vector<int64_t> too_long = p.frontier.DurationsAt(0);
  too_long[0] += 1000000;
  auto out_of_table = power->PeakPower(too_long);
  ASSERT_FALSE(out_of_table.ok());
  EXPECT_NE(out_of_table.error().message.find("outside its cost table"), std::string::npos);
}

}  // namespace
}  // namespace wattcut
