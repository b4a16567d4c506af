#include "wattcut/solver/bounded_min_cut.h"

#include <cmath>

namespace wattcut {

void BoundedMinCut::Reset(int num_nodes) {
  num_nodes_ = num_nodes;
  arcs_.clear();
}

void BoundedMinCut::AddArc(int from, int to, double lower, double upper) {
  arcs_.push_back({from, to, lower, upper});
}

BoundedMinCut::Outcome BoundedMinCut::Run(int source, int sink) {
  const int super_source = num_nodes_;
  const int super_sink = num_nodes_ + 1;
  flow_.Reset(num_nodes_ + 2);
  excess_.assign(static_cast<size_t>(num_nodes_), 0.0);
  for (const Arc& arc : arcs_) {
    flow_.AddArc(arc.from, arc.to, arc.upper >= MaxFlow::kInfinity ? MaxFlow::kInfinity : arc.upper - arc.lower);
    excess_[static_cast<size_t>(arc.to)] += arc.lower;
    excess_[static_cast<size_t>(arc.from)] -= arc.lower;
  }
  std::vector<int> helper_arcs;
  double demand = 0;
  for (int v = 0; v < num_nodes_; ++v) {
    double e = excess_[static_cast<size_t>(v)];
    if (e > MaxFlow::kEpsilon) {
      helper_arcs.push_back(flow_.AddArc(super_source, v, e));
      demand += e;
    } else if (e < -MaxFlow::kEpsilon) {
      helper_arcs.push_back(flow_.AddArc(v, super_sink, -e));
    }
  }
  helper_arcs.push_back(flow_.AddArc(sink, source, MaxFlow::kInfinity));

  double feasible = flow_.Run(super_source, super_sink);
  if (feasible < demand - 1e-9 * (1.0 + demand)) return Outcome::kInfeasible;
  for (int arc : helper_arcs) flow_.DisableArc(arc);

  double extra = flow_.Run(source, sink);
  if (extra >= MaxFlow::kInfinity / 2) return Outcome::kUnbounded;

  const std::vector<uint8_t>& side = flow_.SourceSide(source);
  side_.assign(side.begin(), side.begin() + num_nodes_);
  cut_value_ = 0;
  for (const Arc& arc : arcs_) {
    bool from_s = side_[static_cast<size_t>(arc.from)] != 0;
    bool to_s = side_[static_cast<size_t>(arc.to)] != 0;
    if (from_s && !to_s) cut_value_ += arc.upper;
    if (!from_s && to_s) cut_value_ -= arc.lower;
  }
  if (cut_value_ >= MaxFlow::kInfinity / 2) return Outcome::kUnbounded;
  return Outcome::kFound;
}

}  // namespace wattcut
