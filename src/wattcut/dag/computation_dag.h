// The computation DAG of one training iteration (PERSEUS.md section 4), activity on
// node: one node per computation of the schedule. With profile stages k (the model
// pieces, pipeline_schedule.h: k = chunk * devices + device), edges are:
//   * consecutive computations of the same device, in schedule order;
//   * F(k, m) -> F(k+1, m) and B(k+1, m) -> B(k, m), where B is the backward, or, when the
//     schedule splits it, the backward_input (the zero-bubble B pass): piece k+1 is on the
//     next device, and from the last device on device 0's next chunk;
//   * the last piece's F(m) precedes its B(m), and a split backward's backward_input(k, m)
//     precedes its backward_weight(k, m) (the W pass depends on nothing else), through
//     their device's own order (checked, no edge of their own).
// Nodes are numbered device-major in schedule order: node = offset[device] + position.
#pragma once

#include <utility>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"

namespace wattcut {

struct ComputationDag {
  struct Node {
    int stage = 0;          // the device (pipeline stage) that runs it
    int profile_stage = 0;  // the model piece it computes: ProfileStageOf(stage, computation.chunk, devices)
    Computation computation;
  };
  std::vector<Node> nodes;
  std::vector<std::pair<int, int>> edges;  // (from, to) node indices

  int num_nodes() const { return static_cast<int>(nodes.size()); }
};

// Fails when the schedule is inconsistent (a device missing a forward or backward of some
// (chunk, microbatch), a chunk out of range, backward mixed with backward_input /
// backward_weight, or an order that makes the dependencies cyclic).
Result<ComputationDag> BuildComputationDag(const PipelineSchedule& schedule);

}  // namespace wattcut
