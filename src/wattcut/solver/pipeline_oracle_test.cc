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
#include "wattcut/solver/time_cost_testing.h"

namespace wattcut {
namespace {

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
        problem.cost_tables.push_back(RandomConvexCostTable(rng, 1, 4, 4));
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
    ASSERT_EQ(solver.makespan(), MakespanOf(problem, longest));
    int64_t previous = -1;
    do {
      SCOPED_TRACE("makespan " + std::to_string(solver.makespan()));
      if (previous >= 0) {
        ASSERT_EQ(solver.makespan(), previous - 1) << "points must be one unit apart";
      }
      previous = solver.makespan();
      ASSERT_EQ(MakespanOf(problem, solver.durations()), solver.makespan());
      const double oracle = OracleMinCost(problem, solver.makespan());
      ASSERT_FALSE(std::isnan(oracle));
      EXPECT_NEAR(solver.total_cost(), oracle, 1e-6);
      ++points_checked;
    } while (solver.Step());
    EXPECT_EQ(solver.makespan(), MakespanOf(problem, shortest));
  }
  EXPECT_GT(points_checked, 100);
  RecordProperty("points_checked", std::to_string(points_checked));
}

}  // namespace
}  // namespace wattcut
