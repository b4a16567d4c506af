#include "wattcut/solver/bounded_min_cut.h"

#include <cmath>
#include <utility>

namespace wattcut {

void BoundedMinCut::Reset(int num_nodes) {
  num_nodes_ = num_nodes;
  arcs_.clear();
}

void BoundedMinCut::AddArc(int from, int to, double lower, double upper) {
  arcs_.push_back({from, to, lower, std::min(upper, MaxFlow::kInfinity)});
}

BoundedMinCut::Outcome BoundedMinCut::Run(int source, int sink) {
  if (!reduce_) {
    Outcome outcome = Solve(arcs_, source, sink);
    crossing_ = reduced_crossing_;
    return outcome;
  }
  if (!reduction_.Run(num_nodes_, arcs_, source, sink)) return Outcome::kInfeasible;
  Outcome outcome = Solve(reduction_.reduced_arcs(), source, sink);
  if (outcome == Outcome::kFound) reduction_.Expand(reduced_crossing_, crossing_);
  return outcome;
}

BoundedMinCut::Outcome BoundedMinCut::Solve(const std::vector<BoundedArc>& arcs, int source, int sink) {
  // The cut value sum_fwd(upper) - sum_bwd(lower) equals
  //   sum_fwd(upper - lower) - sum_{v on the source side} excess(v),
  // where excess(v) = lower bounds in - lower bounds out. The node terms become arcs
  // source -> v (capacity excess(v) > 0) and v -> sink (capacity -excess(v) > 0), so one
  // max flow on short paths finds the minimum cut. Bounds a flow must meet are never
  // routed through the whole network, as the textbook feasible-flow phase would.
  excess_.assign(static_cast<size_t>(num_nodes_), 0.0);
  for (const BoundedArc& arc : arcs) {
    excess_[static_cast<size_t>(arc.to)] += arc.lower;
    excess_[static_cast<size_t>(arc.from)] -= arc.lower;
  }
  // The network: the arcs (capacity upper - lower), then the node-excess arcs.
  std::vector<std::pair<int, int>> ends;
  std::vector<double> capacity;
  for (const BoundedArc& arc : arcs) {
    ends.emplace_back(arc.from, arc.to);
    capacity.push_back(arc.upper >= MaxFlow::kInfinity ? MaxFlow::kInfinity : arc.upper - arc.lower);
  }
  for (int v = 0; v < num_nodes_; ++v) {
    if (v == source || v == sink) continue;
    double e = excess_[static_cast<size_t>(v)];
    if (e > MaxFlow::kEpsilon) {
      ends.emplace_back(source, v);
      capacity.push_back(e);
    } else if (e < -MaxFlow::kEpsilon) {
      ends.emplace_back(v, sink);
      capacity.push_back(-e);
    }
  }
  const std::vector<uint8_t>* side_ptr = nullptr;
  if (engine_ == Engine::kPreflow) {
    // Unbounded arcs get a capacity just above all finite arcs together: a cut that
    // crosses one costs more than any cut that crosses none, and magnitudes stay small.
    double finite_total = 0;
    for (double c : capacity) finite_total += c < MaxFlow::kInfinity ? c : 0;
    preflow_.Build(num_nodes_, ends, source, sink);
    for (size_t i = 0; i < capacity.size(); ++i) {
      preflow_.SetCapacity(static_cast<int>(i), capacity[i] < MaxFlow::kInfinity ? capacity[i] : 2 * finite_total + 1);
    }
    if (preflow_.Solve() > finite_total + 0.5) return Outcome::kUnbounded;
    side_ptr = &preflow_.SourceSide();
  } else {
    flow_.Reset(num_nodes_);
    for (size_t i = 0; i < capacity.size(); ++i) flow_.AddArc(ends[i].first, ends[i].second, capacity[i]);
    if (flow_.Run(source, sink) >= MaxFlow::kInfinity / 2) return Outcome::kUnbounded;
    side_ptr = &flow_.SourceSide(source);
  }
  const std::vector<uint8_t>& side = *side_ptr;
  cut_value_ = 0;
  reduced_crossing_.assign(arcs.size(), 0);
  for (size_t i = 0; i < arcs.size(); ++i) {
    const BoundedArc& arc = arcs[i];
    bool from_s = side[static_cast<size_t>(arc.from)] != 0;
    bool to_s = side[static_cast<size_t>(arc.to)] != 0;
    if (from_s && !to_s) {
      cut_value_ += arc.upper;
      reduced_crossing_[i] = 1;
    } else if (!from_s && to_s) {
      cut_value_ -= arc.lower;
      reduced_crossing_[i] = -1;
    }
  }
  if (cut_value_ >= MaxFlow::kInfinity / 2) return Outcome::kUnbounded;
  return Outcome::kFound;
}

}  // namespace wattcut
