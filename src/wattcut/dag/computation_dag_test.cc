#include "wattcut/dag/computation_dag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "wattcut/profile/instruction_letters_testing.h"

namespace wattcut {
namespace {

using namespace instruction_letters;

// {"F0 F1 B0 B1", ...} -> schedule; I is backward_input, W backward_weight, and "F1.2" is
// chunk 2's forward of microbatch 1.
PipelineSchedule Schedule(const std::vector<std::string>& stages) {
  PipelineSchedule schedule;
  for (const std::string& text : stages) {
    std::vector<Computation> list;
    std::istringstream in(text);
    std::string token;
    while (in >> token) {
      const InstructionKind kind = token[0] == 'F' ? F : token[0] == 'B' ? B : token[0] == 'I' ? BI : BW;
      const size_t dot = token.find('.');
      const int microbatch = std::stoi(token.substr(1, dot == std::string::npos ? std::string::npos : dot - 1));
      list.push_back({kind, microbatch, dot == std::string::npos ? 0 : std::stoi(token.substr(dot + 1))});
    }
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

TEST(ComputationDagTest, ExactEdgesInterleaved) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(PipelineScheduleKind::kInterleaved, 2, 2, 2);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  ASSERT_EQ(*schedule, Schedule({"F0 F1 F0.1 F1.1 B0.1 B1.1 B0 B1", "F0 F1 F0.1 B0.1 F1.1 B1.1 B0 B1"}));
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  // Device 0: nodes 0..7, device 1: nodes 8..15. Model pieces: device 0 chunk 0 = 0,
  // device 1 chunk 0 = 1, device 0 chunk 1 = 2, device 1 chunk 1 = 3.
  const std::vector<int> expected_pieces = {0, 0, 2, 2, 2, 2, 0, 0, 1, 1, 3, 3, 3, 3, 1, 1};
  for (int v = 0; v < 16; ++v) {
    EXPECT_EQ(dag->nodes[static_cast<size_t>(v)].stage, v / 8) << v;
    EXPECT_EQ(dag->nodes[static_cast<size_t>(v)].profile_stage, expected_pieces[static_cast<size_t>(v)]) << v;
  }
  const std::set<std::pair<int, int>> expected_edges = {
      // device orders
      {0, 1},
      {1, 2},
      {2, 3},
      {3, 4},
      {4, 5},
      {5, 6},
      {6, 7},
      {8, 9},
      {9, 10},
      {10, 11},
      {11, 12},
      {12, 13},
      {13, 14},
      {14, 15},
      // F(k, m) -> F(k+1, m): piece 0 -> 1 -> 2 (back on device 0) -> 3
      {0, 8},
      {8, 2},
      {2, 10},
      {1, 9},
      {9, 3},
      {3, 12},
      // B(k+1, m) -> B(k, m): piece 3 -> 2 -> 1 -> 0
      {11, 4},
      {4, 14},
      {14, 6},
      {13, 5},
      {5, 15},
      {15, 7},
  };
  EXPECT_EQ(EdgeSet(*dag), expected_edges);
  EXPECT_EQ(dag->edges.size(), expected_edges.size());
}

TEST(ComputationDagTest, ExactEdgesZeroBubbleH1) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(PipelineScheduleKind::kZeroBubbleH1, 2, 2);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  ASSERT_EQ(*schedule, Schedule({"F0 F1 I0 W0 I1 W1", "F0 I0 F1 I1 W0 W1"}));
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  // W passes have no cross-device edge: they depend on their own B only (through the order).
  const std::set<std::pair<int, int>> expected_edges = {
      {0, 1}, {1, 2}, {2, 3},  {3, 4},   {4, 5}, {6, 7},
      {7, 8}, {8, 9}, {9, 10}, {10, 11}, {0, 6}, {1, 8},  // F(0, m) -> F(1, m)
      {7, 2}, {9, 4},                                     // B(1, m) -> B(0, m)
  };
  EXPECT_EQ(EdgeSet(*dag), expected_edges);
  EXPECT_EQ(dag->edges.size(), expected_edges.size());
}

// Every builder's DAG: acyclic, each edge a device-order edge between consecutive nodes or
// a cross-piece edge of its documented kind, and exactly as many of each as documented.
TEST(ComputationDagTest, EveryScheduleHasOnlyDocumentedEdges) {
  struct Case {
    PipelineScheduleKind kind;
    int devices, microbatches, chunks;
  };
  std::vector<Case> cases;
  for (int p = 1; p <= 4; ++p) {
    for (int m = 1; m <= 6; ++m) {
      cases.push_back({PipelineScheduleKind::k1F1B, p, m, 1});
      cases.push_back({PipelineScheduleKind::kGPipe, p, m, 1});
      cases.push_back({PipelineScheduleKind::kZeroBubbleH1, p, m, 1});
      for (int v = 2; v <= 3; ++v) {
        if (m % p == 0) cases.push_back({PipelineScheduleKind::kInterleaved, p, m, v});
      }
    }
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(PipelineScheduleName(c.kind)) + " " + std::to_string(c.devices) + " x " +
                 std::to_string(c.microbatches) + " x " + std::to_string(c.chunks));
    Result<PipelineSchedule> schedule = BuildPipelineSchedule(c.kind, c.devices, c.microbatches, c.chunks);
    ASSERT_TRUE(schedule.ok()) << schedule.error().message;
    Result<ComputationDag> dag = BuildComputationDag(*schedule);
    ASSERT_TRUE(dag.ok()) << dag.error().message;
    const int kinds = SplitsBackward(c.kind) ? 3 : 2;
    const int pieces = c.devices * c.chunks;
    ASSERT_EQ(dag->num_nodes(), kinds * pieces * c.microbatches);
    // The documented edges, from the nodes' own (piece, kind, microbatch).
    std::map<std::tuple<int, InstructionKind, int>, int> node_of;
    for (int v = 0; v < dag->num_nodes(); ++v) {
      const auto& n = dag->nodes[static_cast<size_t>(v)];
      EXPECT_EQ(n.profile_stage, ProfileStageOf(n.stage, n.computation.chunk, c.devices));
      node_of[{n.profile_stage, n.computation.kind, n.computation.microbatch}] = v;
    }
    std::set<std::pair<int, int>> expected;
    for (int v = 0; v + 1 < dag->num_nodes(); ++v) {
      if (dag->nodes[static_cast<size_t>(v)].stage == dag->nodes[static_cast<size_t>(v) + 1].stage) {
        expected.insert({v, v + 1});
      }
    }
    const InstructionKind backward = SplitsBackward(c.kind) ? BI : B;
    for (int k = 0; k + 1 < pieces; ++k) {
      for (int m = 0; m < c.microbatches; ++m) {
        expected.insert({node_of.at({k, F, m}), node_of.at({k + 1, F, m})});
        expected.insert({node_of.at({k + 1, backward, m}), node_of.at({k, backward, m})});
      }
    }
    EXPECT_EQ(EdgeSet(*dag), expected);
    EXPECT_EQ(dag->edges.size(), expected.size()) << "no duplicate edges";
  }
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

TEST(ComputationDagTest, RejectsWeightGradientBeforeItsInputGradient) {
  EXPECT_EQ(ErrorOf(Schedule({"F0 W0 I0"})), "the schedule's order makes the dependencies cyclic");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F1 I0 W1 I1 W0", "F0 I0 F1 I1 W0 W1"})),
            "the schedule's order makes the dependencies cyclic");
}

TEST(ComputationDagTest, RejectsInconsistentSplitAndChunks) {
  EXPECT_EQ(ErrorOf(Schedule({"F0 B0 W0"})),
            "the schedule mixes backward with backward_input / backward_weight computations");
  EXPECT_EQ(ErrorOf(Schedule({"F0 I0 W0", "F0 I0"})), "stage 1 has 2 computations, expected 3");
  EXPECT_EQ(ErrorOf(Schedule({"F0 I0 I0"})), "stage 0: backward_input of microbatch 0 appears twice");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F0.1 B0.1 B0", "F0 F0.1 B0.1 B0.1"})),
            "stage 1 chunk 1: backward of microbatch 0 appears twice");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F0.1 B0.1 B0", "F0 B0"})), "stage 1 has 2 computations, expected 4");
  EXPECT_EQ(ErrorOf(Schedule({"F0 F0.-1 B0.-1 B0"})), "stage 0: chunk -1 out of range");
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
