// Maximum flow by Dinic's algorithm on a residual network with real capacities.
//
// Phases follow LEMON's style: Reset() the network, AddArc() arcs, Run() from a source
// to a sink (it augments the flow already there, so it can be run again after arcs are
// disabled), then read SourceSide() for the minimum cut. Capacities are doubles; a
// residual of at most kEpsilon counts as zero. kInfinity stands for an unbounded arc:
// a flow value of kInfinity / 2 or more means the cut is unbounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wattcut/solver/residual_epsilon.h"

namespace wattcut {

class MaxFlow {
 public:
  static constexpr double kInfinity = 1e9;
  static constexpr double kEpsilon = kResidualEpsilon;  // residual_epsilon.h

  // Empties the network and sizes it for `num_nodes` nodes. Keeps allocated memory.
  void Reset(int num_nodes);
  // Adds an arc with the given capacity; returns its id. Its reverse residual arc is id ^ 1.
  int AddArc(int from, int to, double capacity);
  // Removes an arc and its reverse from the residual network (flow on it is forgotten).
  void DisableArc(int arc);

  // Pushes as much flow as possible from source to sink; returns the amount pushed.
  double Run(int source, int sink);

  // Flow currently on an arc added by AddArc (its reverse arc's residual).
  double flow(int arc) const { return residual_[static_cast<size_t>(arc ^ 1)]; }
  double residual(int arc) const { return residual_[static_cast<size_t>(arc)]; }

  // side[v] == 1 when v is reachable from `source` in the residual network.
  const std::vector<uint8_t>& SourceSide(int source);

  int num_nodes() const { return num_nodes_; }

 private:
  bool BuildLevels(int source, int sink);
  double Augment(int node, int sink, double limit);
  void BuildAdjacency();

  int num_nodes_ = 0;
  std::vector<int> head_;  // arc endpoints: head_[a] = to-node of arc a
  std::vector<double> residual_;
  std::vector<int> tail_;
  // Compressed adjacency: arcs leaving node v are adj_[adj_start_[v] .. adj_start_[v+1]).
  std::vector<int> adj_start_, adj_;
  bool adjacency_built_ = false;
  std::vector<int> level_, next_arc_, queue_;
  // Augment's path from the source down the level graph (iterative: its depth is the
  // number of levels).
  struct AugmentFrame {
    int node;
    double limit;   // what the frame may push on from its node
    double pushed;  // what it has pushed so far
  };
  std::vector<AugmentFrame> augment_path_;
  std::vector<uint8_t> side_;
};

}  // namespace wattcut
