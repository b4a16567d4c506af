// A minimum cut kept up to date while capacities change a little at a time (the frontier
// solver's warm engine; see frontier_solver.h).
//
// The network has a fixed shape: arcs between nodes 0..num_nodes-1 given to Build(), and
// per node a terminal capacity, an arc from the source (> 0) or to the sink (< 0). Only
// capacities change, and the flow is kept from one Solve() to the next:
//   * an arc whose flow exceeds its new capacity keeps flow = capacity; its tail's
//     surplus and its head's shortfall go to their terminal arcs. Adding the same amount
//     to a node's source arc and to its sink arc shifts every cut by that amount (Kohli
//     and Torr, "Dynamic graph cuts", PAMI 2007), so only the net terminal capacity left
//     is stored, and the flow stays a valid flow without being rerouted;
//   * Solve() then completes a maximum flow with Dinic phases: a breadth-first search
//     from every node with source capacity left, stopped at the first level that holds a
//     node with sink capacity left, then a blocking flow pulled back from those nodes.
// Every node has a terminal arc, so augmenting paths are short and the searches stay in
// the part of the network that the source reaches; the last search, which finds no node
// with sink capacity, is the minimum cut.
//
// After Solve(), OnSourceSide(v) is true exactly for the nodes reachable from the source
// in the residual network: the minimum cut with the smallest source side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "wattcut/solver/residual_epsilon.h"

namespace wattcut {

class DynamicMinCut {
 public:
  // Residual capacities at or below this count as zero.
  static constexpr double kEpsilon = kResidualEpsilon;  // residual_epsilon.h

  // Fixes the shape: `arcs` (from, to); all capacities and terminal capacities 0, no flow.
  void Build(int num_nodes, const std::vector<std::pair<int, int>>& arcs);

  double capacity(int arc) const { return capacity_[static_cast<size_t>(arc)]; }
  void SetCapacity(int arc, double capacity);
  // > 0: an arc from the source with this capacity; < 0: an arc to the sink with
  // capacity -terminal_capacity.
  double terminal_capacity(int node) const { return terminal_[static_cast<size_t>(node)]; }
  void SetTerminalCapacity(int node, double terminal_capacity);

  // Completes a maximum flow for the current capacities and finds the minimum cut.
  void Solve();
  bool OnSourceSide(int node) const {
    const auto v = static_cast<size_t>(node);
    return search_of_[v] == search_ && level_[v] >= 0;
  }

 private:
  // Levels from the nodes with source capacity left; true when a node with sink
  // capacity left was reached (then sinks_ lists those at the smallest such level).
  bool SearchLevels();
  // Pushes up to `limit` into `node` along arcs that go up one level, from nodes at
  // level 0; returns the amount. Iterative: its depth is the number of levels.
  double Pull(int node, double limit);

  // A node whose net terminal capacity may have become positive: listed in sources_.
  void NoteSource(int node);

  int num_nodes_ = 0;
  // Residual arcs grouped by tail (slots): node v's are out_start_[v] .. out_start_[v+1].
  struct Slot {
    int head;
    int mate;  // the slot of the reverse residual arc
    double residual;
  };
  std::vector<int> out_start_;
  std::vector<Slot> slots_;
  std::vector<int> forward_slot_;          // per arc given to Build: its tail-to-head slot
  std::vector<double> capacity_;           // per arc given to Build
  std::vector<double> terminal_;           // as set
  std::vector<double> terminal_residual_;  // net: > 0 from the source, < 0 to the sink
  // Every node with source capacity left is listed (and flagged); others may be too.
  std::vector<int> sources_;
  std::vector<uint8_t> listed_;
  // level_[v] counts only when search_of_[v] == search_ (the current search).
  std::vector<int> level_, search_of_;
  int search_ = 0;
  std::vector<int> next_slot_, queue_, sinks_;
  // Pull's path from the sink-side node being served down to level 0.
  struct PullFrame {
    int node;
    double limit;  // what the frame may pull into its node
    double total;  // what it has pulled so far
  };
  std::vector<PullFrame> pull_path_;
};

}  // namespace wattcut
