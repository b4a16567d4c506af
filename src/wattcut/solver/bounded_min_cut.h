// Minimum s-t cut of a network whose arcs carry flow bounds [lower, upper]
// (PERSEUS.md section 5, step c).
//
// Phases: Reset(); AddArc() each arc; Run(source, sink); then Crossing(). The cut
// minimises the sum of the upper bounds of arcs crossing it forward minus the lower
// bounds of arcs crossing it backward; among minimum cuts it returns the one with the
// smallest source side (Dinic engine: what the reference's feasible-flow-then-max-flow
// method returns) or the largest one (push-relabel engine). Any minimum cut gives a
// least-cost unit reduction, so both engines give the same frontier energies.
//
// By default the network is first shrunk by series-parallel reduction (exact; see
// series_parallel_reduction.h), which is what makes the frontier solver fast.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/solver/max_flow.h"
#include "wattcut/solver/push_relabel.h"
#include "wattcut/solver/series_parallel_reduction.h"

namespace wattcut {

class BoundedMinCut {
 public:
  enum class Outcome {
    kFound,       // a finite minimum cut
    kInfeasible,  // no flow satisfies the bounds (found by the series reduction)
    kUnbounded,   // every cut crosses an unbounded arc forward
  };

  enum class Engine {
    kPreflow,  // push-relabel, first phase only (PushRelabel; default; fastest here)
    kDinic,    // Dinic's max flow
  };
  // Disables the series-parallel reduction (for tests and benchmarks that compare paths).
  void set_reduce(bool reduce) { reduce_ = reduce; }
  void set_engine(Engine engine) { engine_ = engine; }

  void Reset(int num_nodes);
  // `upper` may be MaxFlow::kInfinity. Requires lower <= upper.
  void AddArc(int from, int to, double lower, double upper);
  Outcome Run(int source, int sink);
  // Valid after Run() returned kFound: +1 when arc `arc` (in AddArc order) crosses the
  // cut forward (source side to sink side), -1 backward, 0 not at all.
  int Crossing(int arc) const { return crossing_[static_cast<size_t>(arc)]; }
  double cut_value() const { return cut_value_; }

 private:
  Outcome Solve(const std::vector<BoundedArc>& arcs, int source, int sink);

  bool reduce_ = true;
  Engine engine_ = Engine::kPreflow;
  PushRelabel preflow_;
  int num_nodes_ = 0;
  std::vector<BoundedArc> arcs_;
  SeriesParallelReduction reduction_;
  std::vector<int8_t> reduced_crossing_, crossing_;
  std::vector<double> excess_;
  MaxFlow flow_;
  std::vector<uint8_t> side_;
  double cut_value_ = 0;
};

}  // namespace wattcut
