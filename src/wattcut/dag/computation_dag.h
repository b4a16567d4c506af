// The computation DAG of one training iteration (PERSEUS.md section 4), activity on
// node: one node per (stage, computation) of the schedule. Edges:
//   * consecutive computations of the same stage, in schedule order;
//   * F(s, m) -> F(s+1, m) and B(s+1, m) -> B(s, m);
//   * the last stage's F(m) precedes its B(m) through its own order.
// Nodes are numbered stage-major in schedule order: node = offset[stage] + position.
#pragma once

#include <utility>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"

namespace wattcut {

struct ComputationDag {
  struct Node {
    int stage = 0;
    Computation computation;
  };
  std::vector<Node> nodes;
  std::vector<std::pair<int, int>> edges;  // (from, to) node indices

  int num_nodes() const { return static_cast<int>(nodes.size()); }
};

// Fails when the schedule is inconsistent (a stage missing a forward or backward of some
// microbatch, or an order that makes the dependencies cyclic).
Result<ComputationDag> BuildComputationDag(const PipelineSchedule& schedule);

}  // namespace wattcut
