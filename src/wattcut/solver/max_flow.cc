#include "wattcut/solver/max_flow.h"

#include <algorithm>

namespace wattcut {

void MaxFlow::Reset(int num_nodes) {
  num_nodes_ = num_nodes;
  head_.clear();
  tail_.clear();
  residual_.clear();
  adjacency_built_ = false;
}

int MaxFlow::AddArc(int from, int to, double capacity) {
  int id = static_cast<int>(head_.size());
  head_.push_back(to);
  tail_.push_back(from);
  residual_.push_back(std::max(0.0, capacity));
  head_.push_back(from);
  tail_.push_back(to);
  residual_.push_back(0.0);
  adjacency_built_ = false;
  return id;
}

void MaxFlow::DisableArc(int arc) {
  residual_[static_cast<size_t>(arc)] = 0;
  residual_[static_cast<size_t>(arc ^ 1)] = 0;
}

void MaxFlow::BuildAdjacency() {
  const auto n = static_cast<size_t>(num_nodes_);
  adj_start_.assign(n + 1, 0);
  for (int t : tail_) ++adj_start_[static_cast<size_t>(t) + 1];
  for (size_t v = 0; v < n; ++v) adj_start_[v + 1] += adj_start_[v];
  adj_.resize(tail_.size());
  next_arc_.assign(adj_start_.begin(), adj_start_.end() - 1);
  for (size_t a = 0; a < tail_.size(); ++a) {
    adj_[static_cast<size_t>(next_arc_[static_cast<size_t>(tail_[a])]++)] = static_cast<int>(a);
  }
  adjacency_built_ = true;
}

bool MaxFlow::BuildLevels(int source, int sink) {
  level_.assign(static_cast<size_t>(num_nodes_), -1);
  queue_.clear();
  queue_.push_back(source);
  level_[static_cast<size_t>(source)] = 0;
  for (size_t i = 0; i < queue_.size(); ++i) {
    int u = queue_[i];
    // Nodes at the sink's level or beyond cannot lie on a shortest augmenting path.
    if (level_[static_cast<size_t>(sink)] >= 0 && level_[static_cast<size_t>(u)] >= level_[static_cast<size_t>(sink)])
      break;
    for (int k = adj_start_[static_cast<size_t>(u)]; k < adj_start_[static_cast<size_t>(u) + 1]; ++k) {
      int a = adj_[static_cast<size_t>(k)];
      int v = head_[static_cast<size_t>(a)];
      if (residual_[static_cast<size_t>(a)] > kEpsilon && level_[static_cast<size_t>(v)] < 0) {
        level_[static_cast<size_t>(v)] = level_[static_cast<size_t>(u)] + 1;
        queue_.push_back(v);
      }
    }
  }
  return level_[static_cast<size_t>(sink)] >= 0;
}

double MaxFlow::Augment(int node, int sink, double limit) {
  // Pushes up to `limit` from `node` along the level graph, over as many paths as it
  // takes; a node that cannot pass anything on is dropped from the level graph. A
  // depth-first search with one frame per node of the current path, on augment_path_
  // rather than the call stack (a path is as long as the level graph is deep).
  augment_path_.clear();
  augment_path_.push_back({node, limit, 0.0});
  double returned = 0;      // what the frame just popped pushed on from its node
  bool from_child = false;  // the top frame resumes after a child frame
  while (true) {
    AugmentFrame& frame = augment_path_.back();
    const auto u = static_cast<size_t>(frame.node);
    bool done = false;
    if (from_child) {
      from_child = false;
      const int a = adj_[static_cast<size_t>(next_arc_[u])];
      if (returned > 0) {
        residual_[static_cast<size_t>(a)] -= returned;
        residual_[static_cast<size_t>(a ^ 1)] += returned;
        frame.pushed += returned;
        // Keep this arc (next_arc_ stays on it): it may have residual left.
        if (frame.limit - frame.pushed <= kEpsilon) done = true;
      }
      if (!done) ++next_arc_[u];
    } else if (frame.node == sink) {
      frame.pushed = frame.limit;
      done = true;
    }
    if (!done) {
      int& k = next_arc_[u];
      for (; k < adj_start_[u + 1]; ++k) {
        const int a = adj_[static_cast<size_t>(k)];
        const int v = head_[static_cast<size_t>(a)];
        if (residual_[static_cast<size_t>(a)] <= kEpsilon || level_[static_cast<size_t>(v)] != level_[u] + 1) continue;
        break;
      }
      if (k < adj_start_[u + 1]) {
        const int a = adj_[static_cast<size_t>(k)];
        const double child_limit = std::min(frame.limit - frame.pushed, residual_[static_cast<size_t>(a)]);
        augment_path_.push_back({head_[static_cast<size_t>(a)], child_limit, 0.0});  // invalidates `frame`
        continue;
      }
      level_[u] = -1;
    }
    returned = augment_path_.back().pushed;
    augment_path_.pop_back();
    if (augment_path_.empty()) return returned;
    from_child = true;
  }
}

double MaxFlow::Run(int source, int sink) {
  if (!adjacency_built_) BuildAdjacency();
  double total = 0;
  while (BuildLevels(source, sink)) {
    next_arc_.assign(adj_start_.begin(), adj_start_.end() - 1);
    double pushed = Augment(source, sink, 2 * kInfinity);
    total += pushed;
    if (total >= kInfinity / 2) return total;
  }
  return total;
}

const std::vector<uint8_t>& MaxFlow::SourceSide(int source) {
  if (!adjacency_built_) BuildAdjacency();
  side_.assign(static_cast<size_t>(num_nodes_), 0);
  queue_.clear();
  queue_.push_back(source);
  side_[static_cast<size_t>(source)] = 1;
  for (size_t i = 0; i < queue_.size(); ++i) {
    int u = queue_[i];
    for (int k = adj_start_[static_cast<size_t>(u)]; k < adj_start_[static_cast<size_t>(u) + 1]; ++k) {
      int a = adj_[static_cast<size_t>(k)];
      int v = head_[static_cast<size_t>(a)];
      if (residual_[static_cast<size_t>(a)] > kEpsilon && !side_[static_cast<size_t>(v)]) {
        side_[static_cast<size_t>(v)] = 1;
        queue_.push_back(v);
      }
    }
  }
  return side_;
}

}  // namespace wattcut
