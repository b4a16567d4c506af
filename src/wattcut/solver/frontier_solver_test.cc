#include "wattcut/solver/frontier_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "wattcut/profile/cost_model.h"
#include "wattcut/profile/operation_options.h"
#include "wattcut/solver/glpk_oracle_testing.h"
#include "wattcut/solver/time_cost_testing.h"

namespace wattcut {
namespace {

TimeCostProblem RandomProblem(std::mt19937& rng, int num_activities) {
  TimeCostProblem problem;
  std::bernoulli_distribution edge(0.35);
  for (int v = 0; v < num_activities; ++v) {
    problem.cost_tables.push_back(RandomConvexCostTable(rng, 0, 4, 5));
    problem.cost_table.push_back(v);
    for (int u = 0; u < v; ++u) {
      if (edge(rng)) problem.precedences.emplace_back(u, v);
    }
  }
  return problem;
}

// Every frontier point is the least cost for its makespan (checked by an exact integer
// program), points are one unit apart, and the frontier runs from all-longest to the
// shortest makespan the bounds allow.
class FrontierSolverOptimality : public ::testing::TestWithParam<bool> {};

TEST_P(FrontierSolverOptimality, EveryPointIsOptimalOnRandomDags) {
  std::mt19937 rng(20241130);
  int instances = 0, points_checked = 0;
  double worst_gap = 0;
  for (int trial = 0; trial < 150; ++trial) {
    TimeCostProblem problem = RandomProblem(rng, 3 + trial % 7);
    FrontierSolver solver(problem);
    solver.set_warm_start(GetParam());
    solver.Init();
    std::vector<int64_t> shortest, longest;
    for (int i = 0; i < problem.num_activities(); ++i) {
      shortest.push_back(problem.table_of(i).min_duration);
      longest.push_back(problem.table_of(i).max_duration);
    }
    ASSERT_EQ(solver.makespan(), MakespanOf(problem, longest));
    int64_t previous = -1;
    do {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", makespan " + std::to_string(solver.makespan()));
      if (previous >= 0) {
        ASSERT_EQ(solver.makespan(), previous - 1) << "points must be one unit apart";
      }
      previous = solver.makespan();
      ASSERT_EQ(MakespanOf(problem, solver.durations()), solver.makespan());
      double oracle = OracleMinCost(problem, solver.makespan());
      ASSERT_FALSE(std::isnan(oracle));
      double gap = solver.total_cost() - oracle;
      worst_gap = std::max(worst_gap, gap);
      EXPECT_NEAR(solver.total_cost(), oracle, 1e-6);
      ++points_checked;
    } while (solver.Step());
    EXPECT_EQ(solver.makespan(), MakespanOf(problem, shortest)) << "trial " << trial;
    ++instances;
  }
  EXPECT_GE(instances, 100);
  EXPECT_GT(points_checked, 500);
  RecordProperty("worst_gap", std::to_string(worst_gap));
}

INSTANTIATE_TEST_SUITE_P(WarmStartAndFromScratch, FrontierSolverOptimality, ::testing::Bool());

TEST(FrontierSolver, ChainSpeedsUpCheapestActivityFirst) {
  // Two activities in a chain: a costs 1 per unit sped up, b costs 5 per unit.
  TimeCostProblem problem;
  problem.cost_tables = {CostTable{1, 3, {12, 11, 10}}, CostTable{1, 3, {20, 15, 10}}};
  problem.cost_table = {0, 1};
  problem.precedences = {{0, 1}};
  FrontierSolver solver(problem);
  solver.Init();
  EXPECT_EQ(solver.makespan(), 6);
  EXPECT_DOUBLE_EQ(solver.total_cost(), 20);
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.durations(), (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.durations(), (std::vector<int64_t>{1, 3}));
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.durations(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(solver.last_changes(), (std::vector<int32_t>{1}));
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.makespan(), 2);
  EXPECT_FALSE(solver.Step());
  EXPECT_EQ(solver.makespan(), 2);
}

// Issue 14's hand-checked case, from measured options through the convex-hull cost model: a chain
// A -> B, A {(2 s, 10 J), (1 s, 14 J)}, B {(3 s, 6 J), (2 s, 9 J)}, unit time 1 s, no blocking power.
// Slowest (5, 16); then B is the cheaper to speed up (+3 J against A's +4 J): (4, 19); then A: (3, 23).
TEST(FrontierSolver, TheTwoOperationChainFromMeasuredOptions) {
  auto a = BuildOperationOptions({{1410, 2, 10}, {1980, 1, 14}}, 1.0, 1.0, 0);
  auto b = BuildOperationOptions({{1410, 3, 6}, {1980, 2, 9}}, 1.0, 1.0, 0);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok()) << b.error().message;
  TimeCostProblem problem;
  problem.cost_tables = {BuildCostTable(*a, CostModelKind::kConvexHull),
                         BuildCostTable(*b, CostModelKind::kConvexHull)};
  problem.cost_table = {0, 1};
  problem.precedences = {{0, 1}};
  FrontierSolver solver(problem);
  solver.Init();
  std::vector<std::pair<int64_t, double>> frontier = {{solver.makespan(), solver.total_cost()}};
  while (solver.Step()) frontier.emplace_back(solver.makespan(), solver.total_cost());
  EXPECT_EQ(frontier, (std::vector<std::pair<int64_t, double>>{{5, 16}, {4, 19}, {3, 23}}));
}

TEST(FrontierSolver, ParallelBranchesAreSpedUpTogether) {
  // a and b in parallel: both must be sped up to shorten the makespan.
  TimeCostProblem problem;
  problem.cost_tables = {CostTable{1, 2, {4, 3}}, CostTable{1, 2, {6, 4}}};
  problem.cost_table = {0, 1};
  FrontierSolver solver(problem);
  solver.Init();
  EXPECT_EQ(solver.makespan(), 2);
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.durations(), (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(solver.total_cost(), 10);
  EXPECT_FALSE(solver.Step());
}

// A chain of 200,000 activities: its critical DAG is one path of 400,000 nodes, as deep
// as the warm engine's search gets (a pipeline of 8 stages x 30,000 microbatches crashed
// it with SIGSEGV when its blocking flow recursed once per level). The cheapest activity
// is sped up first, then any one of the others.
TEST(FrontierSolver, ChainDeeperThanTheCallStack) {
  constexpr int kActivities = 200'000;
  constexpr int kCheapest = 123'457;
  TimeCostProblem problem;
  problem.cost_tables = {CostTable{1, 2, {12, 10}}, CostTable{1, 2, {10.5, 10}}};
  for (int i = 0; i < kActivities; ++i) {
    problem.cost_table.push_back(i == kCheapest ? 1 : 0);
    if (i > 0) problem.precedences.emplace_back(i - 1, i);
  }
  FrontierSolver solver(problem);
  solver.Init();
  EXPECT_EQ(solver.makespan(), 2 * kActivities);
  const double start_cost = solver.total_cost();
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.makespan(), 2 * kActivities - 1);
  EXPECT_EQ(solver.last_changes(), (std::vector<int32_t>{kCheapest}));
  EXPECT_DOUBLE_EQ(solver.total_cost(), start_cost + 0.5);
  ASSERT_TRUE(solver.Step());
  EXPECT_EQ(solver.makespan(), 2 * kActivities - 2);
  EXPECT_EQ(solver.last_changes().size(), 1u);
  EXPECT_DOUBLE_EQ(solver.total_cost(), start_cost + 2.5);
}

}  // namespace
}  // namespace wattcut
