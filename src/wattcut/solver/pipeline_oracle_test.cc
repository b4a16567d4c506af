// The frontier solver on the DAGs the pipeline schedule builders make (dag/), every
// frontier point checked against the exact integer program (glpk_oracle_testing.h):
// random small 1F1B, GPipe, interleaved and ZB-H1 pipelines with random convex cost
// tables per (model piece, instruction), as the planner builds them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "wattcut/dag/computation_dag.h"
#include "wattcut/solver/frontier_solver.h"
#include "wattcut/solver/glpk_oracle_testing.h"

namespace wattcut {
namespace {

// A random convex, non-increasing cost table over [min_d, min_d + span].
CostTable RandomConvexTable(std::mt19937& rng) {
  std::uniform_int_distribution<int> min_d(1, 4), span(0, 4);
  std::uniform_real_distribution<double> slope(0.05, 3.0), base(0.0, 10.0);
  CostTable table;
  table.min_duration = min_d(rng);
  table.max_duration = table.min_duration + span(rng);
  std::vector<double> slopes;
  for (int64_t i = table.min_duration; i < table.max_duration; ++i) slopes.push_back(slope(rng));
  std::sort(slopes.begin(), slopes.end(), std::greater<>());
  double cost = base(rng) + 20;
  table.cost_j.push_back(cost);
  for (double s : slopes) table.cost_j.push_back(cost -= s);
  return table;
}

// The critical path of the DAG at `durations`, in any node order (Kahn).
int64_t LongestPath(const TimeCostProblem& problem, const std::vector<int64_t>& durations) {
  const auto n = static_cast<size_t>(problem.num_activities());
  std::vector<std::vector<int>> out(n);
  std::vector<int> indegree(n, 0), ready;
  for (auto [u, v] : problem.precedences) {
    out[static_cast<size_t>(u)].push_back(v);
    ++indegree[static_cast<size_t>(v)];
  }
  for (size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push_back(static_cast<int>(v));
  }
  std::vector<int64_t> start(n, 0);
  int64_t makespan = 0;
  while (!ready.empty()) {
    const auto u = static_cast<size_t>(ready.back());
    ready.pop_back();
    const int64_t end = start[u] + durations[u];
    makespan = std::max(makespan, end);
    for (int v : out[u]) {
      start[static_cast<size_t>(v)] = std::max(start[static_cast<size_t>(v)], end);
      if (--indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  return makespan;
}

struct Shape {
  PipelineScheduleKind kind;
  int devices, microbatches, chunks;
};

std::string Name(const Shape& s) {
  return std::string(PipelineScheduleName(s.kind)) + " " + std::to_string(s.devices) + " devices x " +
         std::to_string(s.microbatches) + " microbatches x " + std::to_string(s.chunks) + " chunks";
}

TEST(PipelineOracle, EveryFrontierPointOfEveryScheduleIsOptimal) {
  std::mt19937 rng(20261201);
  const std::vector<Shape> shapes = {
      {PipelineScheduleKind::k1F1B, 2, 3, 1},         {PipelineScheduleKind::kGPipe, 2, 2, 1},
      {PipelineScheduleKind::kInterleaved, 2, 2, 2},  {PipelineScheduleKind::kInterleaved, 2, 4, 2},
      {PipelineScheduleKind::kInterleaved, 1, 2, 3},  {PipelineScheduleKind::kInterleaved, 3, 3, 2},
      {PipelineScheduleKind::kZeroBubbleH1, 2, 2, 1}, {PipelineScheduleKind::kZeroBubbleH1, 3, 3, 1},
      {PipelineScheduleKind::kZeroBubbleH1, 2, 4, 1}, {PipelineScheduleKind::kZeroBubbleH1, 4, 2, 1},
  };
  int points_checked = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const Shape& shape = shapes[static_cast<size_t>(trial) % shapes.size()];
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + Name(shape));
    Result<PipelineSchedule> schedule =
        BuildPipelineSchedule(shape.kind, shape.devices, shape.microbatches, shape.chunks);
    ASSERT_TRUE(schedule.ok()) << schedule.error().message;
    Result<ComputationDag> dag = BuildComputationDag(*schedule);
    ASSERT_TRUE(dag.ok()) << dag.error().message;
    // One table per (model piece, instruction kind), shared by its computations.
    TimeCostProblem problem;
    std::vector<int> table_of(static_cast<size_t>(shape.devices * shape.chunks * kNumInstructionKinds), -1);
    for (const auto& node : dag->nodes) {
      int& table = table_of[static_cast<size_t>(node.profile_stage * kNumInstructionKinds +
                                                static_cast<int>(node.computation.kind))];
      if (table < 0) {
        table = static_cast<int>(problem.cost_tables.size());
        problem.cost_tables.push_back(RandomConvexTable(rng));
      }
      problem.cost_table.push_back(table);
    }
    problem.precedences = dag->edges;
    std::vector<int64_t> shortest, longest;
    for (int i = 0; i < problem.num_activities(); ++i) {
      shortest.push_back(problem.table_of(i).min_duration);
      longest.push_back(problem.table_of(i).max_duration);
    }
    FrontierSolver solver(problem);
    solver.Init();
    ASSERT_EQ(solver.makespan(), LongestPath(problem, longest));
    int64_t previous = -1;
    do {
      SCOPED_TRACE("makespan " + std::to_string(solver.makespan()));
      if (previous >= 0) {
        ASSERT_EQ(solver.makespan(), previous - 1) << "points must be one unit apart";
      }
      previous = solver.makespan();
      ASSERT_EQ(LongestPath(problem, solver.durations()), solver.makespan());
      const double oracle = OracleMinCost(problem, solver.makespan());
      ASSERT_FALSE(std::isnan(oracle));
      EXPECT_NEAR(solver.total_cost(), oracle, 1e-6);
      ++points_checked;
    } while (solver.Step());
    EXPECT_EQ(solver.makespan(), LongestPath(problem, shortest));
  }
  EXPECT_GT(points_checked, 100);
  RecordProperty("points_checked", std::to_string(points_checked));
}

}  // namespace
}  // namespace wattcut
