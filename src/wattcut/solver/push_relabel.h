// A maximum preflow by FIFO push-relabel (global relabelling, gap heuristic), and the
// minimum cut it leaves. BoundedMinCut builds one per cut, on a fresh network; the
// frontier solver's warm engine, which keeps its flow between steps, is DynamicMinCut.
//
// Phases: Build() fixes the shape (all capacities 0), SetCapacity() each arc, Solve()
// saturates the source's arcs and discharges every active node; the minimum cut's source
// side is every node that cannot reach the sink in the residual network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "wattcut/solver/residual_epsilon.h"

namespace wattcut {

class PushRelabel {
 public:
  static constexpr double kEpsilon = kResidualEpsilon;  // residual_epsilon.h

  // Fixes the shape: `arcs` (from, to) between nodes 0..num_nodes-1, all capacities 0.
  void Build(int num_nodes, const std::vector<std::pair<int, int>>& arcs, int source, int sink);
  // Once per arc, before Solve(); a negative capacity counts as 0.
  void SetCapacity(int arc, double capacity);

  // Computes a maximum preflow; returns the flow value into the sink.
  double Solve();
  // side[v] == 1 when v is on the source side of the minimum cut of the last Solve().
  const std::vector<uint8_t>& SourceSide() const { return side_; }

 private:
  void GlobalRelabel();
  void Discharge(int u);
  void Activate(int v);

  int num_nodes_ = 0;
  int source_ = 0, sink_ = 0;
  // Arc 2k is the k-th arc given to Build, 2k+1 its reverse.
  std::vector<int> head_;
  std::vector<double> residual_;
  std::vector<int> adj_start_, adj_, current_;
  std::vector<int> height_;
  std::vector<int> count_;  // nodes at each height below n
  std::vector<double> excess_;
  std::vector<int> queue_, bfs_;
  std::vector<uint8_t> in_queue_;
  size_t queue_head_ = 0;
  long work_since_relabel_ = 0;
  std::vector<uint8_t> side_;
};

}  // namespace wattcut
