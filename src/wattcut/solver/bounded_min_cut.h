// Minimum s-t cut of a network whose arcs carry flow bounds [lower, upper]
// (PERSEUS.md section 5, step c).
//
// Phases: Reset(); AddArc() each arc; Run(source, sink); then SourceSide(). Run first
// finds a flow within the bounds (circulation with an unbounded sink->source arc, via a
// super source and super sink carrying the lower bounds), then maximises it from
// source to sink on the residual network. The cut is the set of nodes reachable from
// the source in the final residual network; its value is the sum of the upper bounds
// of arcs crossing it forward minus the lower bounds of arcs crossing it backward.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/solver/max_flow.h"

namespace wattcut {

class BoundedMinCut {
 public:
  enum class Outcome {
    kFound,       // a finite minimum cut
    kInfeasible,  // no flow satisfies the bounds
    kUnbounded,   // every cut crosses an unbounded arc forward
  };

  void Reset(int num_nodes);
  // `upper` may be MaxFlow::kInfinity. Requires lower <= upper.
  void AddArc(int from, int to, double lower, double upper);
  Outcome Run(int source, int sink);
  // Valid after Run() returned kFound.
  bool OnSourceSide(int node) const { return side_[static_cast<size_t>(node)] != 0; }
  double cut_value() const { return cut_value_; }

 private:
  int num_nodes_ = 0;
  struct Arc {
    int from, to;
    double lower, upper;
  };
  std::vector<Arc> arcs_;
  std::vector<double> excess_;
  MaxFlow flow_;
  std::vector<uint8_t> side_;
  double cut_value_ = 0;
};

}  // namespace wattcut
