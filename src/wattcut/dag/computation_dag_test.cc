#include "wattcut/dag/computation_dag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace wattcut {
namespace {

constexpr auto F = InstructionKind::kForward;
constexpr auto B = InstructionKind::kBackward;

// {"F0 F1 B0 B1", ...} -> schedule.
PipelineSchedule Schedule(const std::vector<std::string>& stages) {
  PipelineSchedule schedule;
  for (const std::string& text : stages) {
    std::vector<Computation> list;
    std::istringstream in(text);
    std::string token;
    while (in >> token) list.push_back({token[0] == 'F' ? F : B, std::stoi(token.substr(1))});
    schedule.push_back(list);
  }
  return schedule;
}

std::set<std::pair<int, int>> EdgeSet(const ComputationDag& dag) {
  return std::set<std::pair<int, int>>(dag.edges.begin(), dag.edges.end());
}

std::string ErrorOf(const PipelineSchedule& schedule) {
  Result<ComputationDag> dag = BuildComputationDag(schedule);
  if (dag.ok()) {
    ADD_FAILURE() << "expected the schedule to be rejected";
    return "";
  }
  return dag.error().message;
}

TEST(ComputationDagTest, ExactEdgesTwoStagesTwoMicrobatches1F1B) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 2, 2);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  // Stage 0: F0 F1 B0 B1 -> nodes 0 1 2 3; stage 1: F0 B0 F1 B1 -> nodes 4 5 6 7.
  ASSERT_EQ(dag->num_nodes(), 8);
  const std::vector<std::pair<int, Computation>> expected_nodes = {
      {0, {F, 0}}, {0, {F, 1}}, {0, {B, 0}}, {0, {B, 1}}, {1, {F, 0}}, {1, {B, 0}}, {1, {F, 1}}, {1, {B, 1}},
  };
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(dag->nodes[static_cast<size_t>(i)].stage, expected_nodes[static_cast<size_t>(i)].first) << i;
    EXPECT_EQ(dag->nodes[static_cast<size_t>(i)].computation, expected_nodes[static_cast<size_t>(i)].second) << i;
  }
  const std::set<std::pair<int, int>> expected_edges = {
      // stage 0 order
      {0, 1},
      {1, 2},
      {2, 3},
      // stage 1 order (the last stage's F(m) -> B(m) comes from here)
      {4, 5},
      {5, 6},
      {6, 7},
      // F(0, m) -> F(1, m)
      {0, 4},
      {1, 6},
      // B(1, m) -> B(0, m)
      {5, 2},
      {7, 3},
  };
  EXPECT_EQ(EdgeSet(*dag), expected_edges);
  EXPECT_EQ(dag->edges.size(), expected_edges.size());  // no duplicates
}

TEST(ComputationDagTest, ExactEdgesGPipe) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(PipelineScheduleKind::kGPipe, 2, 2);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  // Both stages F0 F1 B1 B0: nodes 0..3 and 4..7.
  const std::set<std::pair<int, int>> expected_edges = {
      {0, 1}, {1, 2}, {2, 3}, {4, 5}, {5, 6}, {6, 7}, {0, 4}, {1, 5}, {7, 3}, {6, 2},
  };
  EXPECT_EQ(EdgeSet(*dag), expected_edges);
  EXPECT_EQ(dag->edges.size(), expected_edges.size());
}

TEST(ComputationDagTest, NodesAreStageMajorInScheduleOrder) {
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe}) {
    for (int stages = 1; stages <= 5; ++stages) {
      for (int microbatches = 1; microbatches <= 7; ++microbatches) {
        Result<PipelineSchedule> schedule = BuildPipelineSchedule(kind, stages, microbatches);
        ASSERT_TRUE(schedule.ok()) << schedule.error().message;
        Result<ComputationDag> dag = BuildComputationDag(*schedule);
        ASSERT_TRUE(dag.ok()) << dag.error().message;
        ASSERT_EQ(dag->num_nodes(), 2 * stages * microbatches);
        for (int i = 0; i < dag->num_nodes(); ++i) {
          const int s = i / (2 * microbatches), pos = i % (2 * microbatches);
          EXPECT_EQ(dag->nodes[static_cast<size_t>(i)].stage, s);
          EXPECT_EQ(dag->nodes[static_cast<size_t>(i)].computation,
                    (*schedule)[static_cast<size_t>(s)][static_cast<size_t>(pos)]);
        }
      }
    }
  }
}

TEST(ComputationDagTest, EveryEdgeKindPresentAndNothingElse) {
  constexpr int kStages = 3, kMicrobatches = 4;
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(PipelineScheduleKind::k1F1B, kStages, kMicrobatches);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  int same_stage = 0, forward_cross = 0, backward_cross = 0;
  std::set<std::pair<int, int>> seen;
  for (auto [u, v] : dag->edges) {
    EXPECT_TRUE(seen.insert({u, v}).second) << "duplicate edge " << u << "->" << v;
    const auto& a = dag->nodes[static_cast<size_t>(u)];
    const auto& b = dag->nodes[static_cast<size_t>(v)];
    if (a.stage == b.stage) {
      EXPECT_EQ(v, u + 1) << "same-stage edges join consecutive computations";
      ++same_stage;
    } else if (a.computation.kind == F && b.computation.kind == F) {
      EXPECT_EQ(b.stage, a.stage + 1);
      EXPECT_EQ(a.computation.microbatch, b.computation.microbatch);
      ++forward_cross;
    } else if (a.computation.kind == B && b.computation.kind == B) {
      EXPECT_EQ(b.stage, a.stage - 1);
      EXPECT_EQ(a.computation.microbatch, b.computation.microbatch);
      ++backward_cross;
    } else {
      ADD_FAILURE() << "unexpected cross-stage edge " << u << "->" << v;
    }
  }
  EXPECT_EQ(same_stage, kStages * (2 * kMicrobatches - 1));
  EXPECT_EQ(forward_cross, (kStages - 1) * kMicrobatches);
  EXPECT_EQ(backward_cross, (kStages - 1) * kMicrobatches);
  EXPECT_EQ(dag->edges.size(), static_cast<size_t>(same_stage + forward_cross + backward_cross));
}

TEST(ComputationDagTest, SingleStageIsAChain) {
  Result<ComputationDag> dag = BuildComputationDag(Schedule({"F0 B0 F1 B1"}));
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  EXPECT_EQ(dag->num_nodes(), 4);
  EXPECT_EQ(EdgeSet(*dag), (std::set<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}}));
}

// ---------------------------------------------------------------------------------------
// Rejected schedules.

TEST(ComputationDagTest, RejectsLastStageBackwardBeforeItsForward) {
  EXPECT_EQ(ErrorOf(Schedule({"F0 B0", "B0 F0"})), "the schedule's order makes the dependencies cyclic");
  EXPECT_EQ(ErrorOf(Schedule({"B0 F0"})), "the schedule's order makes the dependencies cyclic");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F1 B0 B1", "F0 B1 F1 B0"})), "the schedule's order makes the dependencies cyclic");
}

TEST(ComputationDagTest, RejectsEarlierStageBackwardBeforeItsForward) {
  // B(0,0) -> F(0,0) -> F(1,0) -> B(1,0) -> B(0,0).
  EXPECT_EQ(ErrorOf(Schedule({"B0 F0", "F0 B0"})), "the schedule's order makes the dependencies cyclic");
}

TEST(ComputationDagTest, RejectsCrossStageCycle) {
  // B(0,0) -> F(0,1) -> F(1,1) -> F(1,0) -> B(1,0) -> B(0,0).
  EXPECT_EQ(ErrorOf(Schedule({"F0 B0 F1 B1", "F1 F0 B0 B1"})), "the schedule's order makes the dependencies cyclic");
}

TEST(ComputationDagTest, RejectsDuplicateComputation) {
  EXPECT_EQ(ErrorOf(Schedule({"F0 F0"})), "stage 0: forward of microbatch 0 appears twice");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F1 B0 B1", "F0 B1 F1 B1"})), "stage 1: backward of microbatch 1 appears twice");
}

TEST(ComputationDagTest, RejectsInconsistentSchedules) {
  EXPECT_EQ(ErrorOf({}), "empty schedule");
  EXPECT_EQ(ErrorOf(Schedule({"F0 B0", "F0"})), "stage 1 has 1 computations, expected 2");
  EXPECT_EQ(ErrorOf(Schedule({"F0 B0", "F0 B0 F1 B1"})), "stage 1 has 4 computations, expected 2");
  EXPECT_EQ(ErrorOf(Schedule({"F0 B1"})), "stage 0: microbatch 1 out of range");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F1 B0 B-1"})), "stage 0: microbatch -1 out of range");
}

}  // namespace
}  // namespace wattcut
