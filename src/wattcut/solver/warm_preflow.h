// A maximum preflow that can be repaired after capacities change. BoundedMinCut uses it
// on a fresh network per cut; the frontier solver's warm engine is DynamicMinCut, whose
// repair and cut extraction are local where this one relabels the whole network.
//
// Consecutive iterations cut nearly the same critical DAG with nearly the same bounds,
// so recomputing a flow from nothing repeats almost all of the previous iteration's
// work. This network has a fixed shape (every arc the solver may ever use, on its
// global node numbers); only capacities change. After capacities change, Solve()
// repairs the previous flow instead of starting over:
//   * an arc whose flow exceeds its new capacity gives the excess back to its tail
//     (which the preflow allows) and leaves its head short; a short node takes the
//     shortfall off its own outgoing flow, moving it downstream until it reaches the
//     sink, where it just lowers the flow value (the network is acyclic, so this ends);
//   * arcs out of the source are kept saturated;
// then a global relabel (exact distances to the sink) and FIFO push-relabel discharge
// finish the maximum preflow. The minimum cut's source side is every node that cannot
// reach the sink in the residual network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace wattcut {

class WarmPreflow {
 public:
  static constexpr double kEpsilon = 1e-10;

  // Fixes the shape: `arcs` (from, to) between nodes 0..num_nodes-1, all capacities 0.
  // The arcs must form a DAG from `source` to `sink`.
  void Build(int num_nodes, const std::vector<std::pair<int, int>>& arcs, int source, int sink);
  double capacity(int arc) const { return capacity_[static_cast<size_t>(2 * arc)]; }
  void SetCapacity(int arc, double capacity);

  // Repairs and completes a maximum preflow; returns the flow value into the sink.
  double Solve();
  // side[v] == 1 when v is on the source side of the minimum cut of the last Solve().
  const std::vector<uint8_t>& SourceSide() const { return side_; }

 private:
  void GlobalRelabel();
  void Discharge(int u);
  void Activate(int v);
  double flow(size_t forward_arc) const { return capacity_[forward_arc] - residual_[forward_arc]; }

  int num_nodes_ = 0;
  int source_ = 0, sink_ = 0;
  // Arc 2k is the k-th arc given to Build, 2k+1 its reverse.
  std::vector<int> head_;
  std::vector<double> capacity_, residual_;
  std::vector<int> adj_start_, adj_, current_;
  std::vector<int> height_;
  std::vector<int> count_;  // nodes at each height below n
  std::vector<double> excess_;
  std::vector<int> queue_, bfs_, short_nodes_;
  std::vector<uint8_t> in_queue_;
  size_t queue_head_ = 0;
  long work_since_relabel_ = 0;
  std::vector<uint8_t> side_;
};

}  // namespace wattcut
