#include "wattcut/solver/frontier_solver.h"

#include <glpk.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace wattcut {
namespace {

// A random convex, non-increasing cost table over [min_d, max_d].
CostTable RandomConvexTable(std::mt19937& rng) {
  std::uniform_int_distribution<int> min_d(0, 4), span(0, 5);
  std::uniform_real_distribution<double> slope(0.05, 3.0), base(0.0, 10.0);
  CostTable table;
  table.min_duration = min_d(rng);
  table.max_duration = table.min_duration + span(rng);
  const int n = static_cast<int>(table.max_duration - table.min_duration);
  // Decreasing slopes in magnitude: convex and non-increasing.
  std::vector<double> slopes;
  for (int i = 0; i < n; ++i) slopes.push_back(slope(rng));
  std::sort(slopes.begin(), slopes.end(), std::greater<>());
  double cost = base(rng) + 20;
  table.cost_j.push_back(cost);
  for (double s : slopes) {
    cost -= s;
    table.cost_j.push_back(cost);
  }
  return table;
}

TimeCostProblem RandomProblem(std::mt19937& rng, int num_activities) {
  TimeCostProblem problem;
  std::bernoulli_distribution edge(0.35);
  for (int v = 0; v < num_activities; ++v) {
    problem.cost_tables.push_back(RandomConvexTable(rng));
    problem.cost_table.push_back(v);
    for (int u = 0; u < v; ++u) {
      if (edge(rng)) problem.precedences.emplace_back(u, v);
    }
  }
  return problem;
}

// Least total cost with makespan <= deadline, by exact integer programming (GLPK):
// integer durations d_i in [min, max], start times s_i >= 0, s_v >= s_u + d_u for each
// precedence, s_i + d_i <= deadline, and an epigraph variable z_i above every segment
// of activity i's convex piecewise-linear cost. Returns NaN when infeasible.
double OracleMinCost(const TimeCostProblem& problem, int64_t deadline) {
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  const int n = problem.num_activities();
  // Columns: d_i (1..n), s_i (n+1..2n), z_i (2n+1..3n).
  glp_add_cols(lp, 3 * n);
  for (int i = 0; i < n; ++i) {
    const CostTable& t = problem.table_of(i);
    glp_set_col_bnds(lp, 1 + i, t.min_duration == t.max_duration ? GLP_FX : GLP_DB, static_cast<double>(t.min_duration),
                     static_cast<double>(t.max_duration));
    glp_set_col_kind(lp, 1 + i, GLP_IV);
    glp_set_col_bnds(lp, 1 + n + i, GLP_LO, 0, 0);
    glp_set_col_bnds(lp, 1 + 2 * n + i, GLP_FR, 0, 0);
    glp_set_obj_coef(lp, 1 + 2 * n + i, 1.0);
  }
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  int row = 0;
  auto add_row = [&](std::vector<std::pair<int, double>> terms, int type, double lo, double hi) {
    ++row;
    glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, type, lo, hi);
    for (auto [col, coef] : terms) {
      ia.push_back(row);
      ja.push_back(col);
      ar.push_back(coef);
    }
  };
  for (auto [u, v] : problem.precedences) {  // s_v - s_u - d_u >= 0
    add_row({{1 + n + v, 1.0}, {1 + n + u, -1.0}, {1 + u, -1.0}}, GLP_LO, 0, 0);
  }
  for (int i = 0; i < n; ++i) {
    add_row({{1 + n + i, 1.0}, {1 + i, 1.0}}, GLP_UP, 0, static_cast<double>(deadline));
    const CostTable& t = problem.table_of(i);
    if (t.min_duration == t.max_duration) {
      add_row({{1 + 2 * n + i, 1.0}}, GLP_LO, t.cost_j[0], 0);
      continue;
    }
    for (int64_t k = t.min_duration; k < t.max_duration; ++k) {
      // z >= c(k) + (c(k+1) - c(k)) * (d - k)
      double slope = t.at(k + 1) - t.at(k);
      add_row({{1 + 2 * n + i, 1.0}, {1 + i, -slope}}, GLP_LO, t.at(k) - slope * static_cast<double>(k), 0);
    }
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  glp_iocp params;
  glp_init_iocp(&params);
  params.presolve = GLP_ON;
  params.msg_lev = GLP_MSG_OFF;
  int rc = glp_intopt(lp, &params);
  double value = std::nan("");
  if (rc == 0 && glp_mip_status(lp) == GLP_OPT) value = glp_mip_obj_val(lp);
  glp_delete_prob(lp);
  return value;
}

int64_t LongestPath(const TimeCostProblem& problem, const std::vector<int64_t>& durations) {
  const int n = problem.num_activities();
  std::vector<int64_t> finish(static_cast<size_t>(n), 0);
  // Precedences go from lower to higher index in these tests: index order is topological.
  std::vector<int64_t> start(static_cast<size_t>(n), 0);
  int64_t makespan = 0;
  for (int v = 0; v < n; ++v) {
    for (auto [a, b] : problem.precedences) {
      if (b == v)
        start[static_cast<size_t>(v)] = std::max(start[static_cast<size_t>(v)], finish[static_cast<size_t>(a)]);
    }
    finish[static_cast<size_t>(v)] = start[static_cast<size_t>(v)] + durations[static_cast<size_t>(v)];
    makespan = std::max(makespan, finish[static_cast<size_t>(v)]);
  }
  return makespan;
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
    ASSERT_EQ(solver.makespan(), LongestPath(problem, longest));
    int64_t previous = -1;
    do {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", makespan " + std::to_string(solver.makespan()));
      if (previous >= 0) {
        ASSERT_EQ(solver.makespan(), previous - 1) << "points must be one unit apart";
      }
      previous = solver.makespan();
      ASSERT_EQ(LongestPath(problem, solver.durations()), solver.makespan());
      double oracle = OracleMinCost(problem, solver.makespan());
      ASSERT_FALSE(std::isnan(oracle));
      double gap = solver.total_cost() - oracle;
      worst_gap = std::max(worst_gap, gap);
      EXPECT_NEAR(solver.total_cost(), oracle, 1e-6);
      ++points_checked;
    } while (solver.Step());
    EXPECT_EQ(solver.makespan(), LongestPath(problem, shortest)) << "trial " << trial;
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
