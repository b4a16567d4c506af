// Minimum s-t cut by the first phase of push-relabel (Goldberg-Tarjan), FIFO order
// with periodic global relabelling.
//
// Only a maximum preflow is computed: that is enough for a minimum cut, whose source
// side is every node that cannot reach the sink in the residual network (the largest
// minimum source side). On the solver's critical DAGs it needs a fraction of the arc
// scans Dinic's algorithm needs, which spends one breadth-first pass per augmenting
// path length and those paths run the length of the pipeline (see bench/).
//
// Phases, as in MaxFlow: Reset(), AddArc(), Run(source, sink), then SourceSide().
// Capacities at or above `unbounded` (a value Run() is given) count as unbounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wattcut {

class PreflowMinCut {
 public:
  static constexpr double kEpsilon = 1e-10;

  void Reset(int num_nodes);
  void AddArc(int from, int to, double capacity);

  // Returns the minimum cut value, or a value >= `unbounded` when every cut crosses an
  // arc of capacity >= `unbounded`.
  double Run(int source, int sink, double unbounded);
  // side[v] == 1 when v is on the source side of the minimum cut found by Run().
  const std::vector<uint8_t>& SourceSide() const { return side_; }

 private:
  void BuildAdjacency();
  void GlobalRelabel(int sink);
  void Discharge(int u);

  int num_nodes_ = 0;
  int source_ = 0, sink_ = 0;
  std::vector<int> tail_, head_;
  std::vector<double> capacity_, residual_;
  std::vector<int> adj_start_, adj_, current_;
  std::vector<int> height_;
  std::vector<double> excess_;
  std::vector<int> queue_, bfs_;
  std::vector<uint8_t> in_queue_;
  size_t queue_head_ = 0;
  long work_since_relabel_ = 0;
  std::vector<uint8_t> side_;
};

}  // namespace wattcut
