#include "wattcut/solver/preflow_min_cut.h"

#include <algorithm>

namespace wattcut {

void PreflowMinCut::Reset(int num_nodes) {
  num_nodes_ = num_nodes;
  tail_.clear();
  head_.clear();
  capacity_.clear();
}

void PreflowMinCut::AddArc(int from, int to, double capacity) {
  // Each arc is stored with its reverse at id ^ 1.
  tail_.push_back(from);
  head_.push_back(to);
  capacity_.push_back(std::max(0.0, capacity));
  tail_.push_back(to);
  head_.push_back(from);
  capacity_.push_back(0.0);
}

void PreflowMinCut::BuildAdjacency() {
  const auto n = static_cast<size_t>(num_nodes_);
  adj_start_.assign(n + 1, 0);
  for (int t : tail_) ++adj_start_[static_cast<size_t>(t) + 1];
  for (size_t v = 0; v < n; ++v) adj_start_[v + 1] += adj_start_[v];
  adj_.resize(tail_.size());
  current_.assign(adj_start_.begin(), adj_start_.end() - 1);
  for (size_t a = 0; a < tail_.size(); ++a) {
    adj_[static_cast<size_t>(current_[static_cast<size_t>(tail_[a])]++)] = static_cast<int>(a);
  }
  current_.assign(adj_start_.begin(), adj_start_.end() - 1);
}

void PreflowMinCut::GlobalRelabel(int sink) {
  // Exact distances to the sink in the residual network; nodes that cannot reach it
  // get height n and are never active again.
  const int n = num_nodes_;
  std::fill(height_.begin(), height_.end(), n);
  height_[static_cast<size_t>(sink)] = 0;
  bfs_.clear();
  bfs_.push_back(sink);
  for (size_t i = 0; i < bfs_.size(); ++i) {
    int v = bfs_[i];
    for (int k = adj_start_[static_cast<size_t>(v)]; k < adj_start_[static_cast<size_t>(v) + 1]; ++k) {
      int a = adj_[static_cast<size_t>(k)];  // v -> u; we need u -> v residual: arc a ^ 1
      int u = head_[static_cast<size_t>(a)];
      if (height_[static_cast<size_t>(u)] == n && u != source_ && residual_[static_cast<size_t>(a ^ 1)] > kEpsilon) {
        height_[static_cast<size_t>(u)] = height_[static_cast<size_t>(v)] + 1;
        bfs_.push_back(u);
      }
    }
  }
  height_[static_cast<size_t>(source_)] = n;
  std::copy(adj_start_.begin(), adj_start_.end() - 1, current_.begin());
  work_since_relabel_ = 0;
}

void PreflowMinCut::Discharge(int u) {
  const auto us = static_cast<size_t>(u);
  const int n = num_nodes_;
  while (excess_[us] > kEpsilon && height_[us] < n) {
    if (current_[us] == adj_start_[us + 1]) {
      // Relabel: one above the lowest neighbour reachable by a residual arc.
      int lowest = 2 * n;
      for (int k = adj_start_[us]; k < adj_start_[us + 1]; ++k) {
        int a = adj_[static_cast<size_t>(k)];
        if (residual_[static_cast<size_t>(a)] > kEpsilon) {
          lowest = std::min(lowest, height_[static_cast<size_t>(head_[static_cast<size_t>(a)])]);
        }
      }
      height_[us] = std::min(n, lowest + 1);
      current_[us] = adj_start_[us];
      work_since_relabel_ += 12 + adj_start_[us + 1] - adj_start_[us];
      continue;
    }
    int a = adj_[static_cast<size_t>(current_[us])];
    int v = head_[static_cast<size_t>(a)];
    double r = residual_[static_cast<size_t>(a)];
    if (r > kEpsilon && height_[us] == height_[static_cast<size_t>(v)] + 1) {
      double delta = std::min(excess_[us], r);
      residual_[static_cast<size_t>(a)] -= delta;
      residual_[static_cast<size_t>(a ^ 1)] += delta;
      excess_[us] -= delta;
      excess_[static_cast<size_t>(v)] += delta;
      if (v != sink_ && v != source_ && !in_queue_[static_cast<size_t>(v)]) {
        in_queue_[static_cast<size_t>(v)] = 1;
        queue_.push_back(v);
      }
      if (excess_[us] <= kEpsilon) break;
    }
    ++current_[us];
  }
}

double PreflowMinCut::Run(int source, int sink, double unbounded) {
  source_ = source;
  sink_ = sink;
  const auto n = static_cast<size_t>(num_nodes_);
  BuildAdjacency();
  // Unbounded arcs get a capacity just above every finite arc together: a cut crossing
  // one then costs more than any cut that crosses none, and magnitudes stay small.
  double finite_total = 0;
  for (size_t a = 0; a < capacity_.size(); a += 2) {
    if (capacity_[a] < unbounded) finite_total += capacity_[a];
  }
  const double big = 2 * finite_total + 1;
  residual_.resize(capacity_.size());
  for (size_t a = 0; a < capacity_.size(); ++a) residual_[a] = capacity_[a] >= unbounded ? big : capacity_[a];

  excess_.assign(n, 0.0);
  height_.assign(n, 0);
  in_queue_.assign(n, 0);
  queue_.clear();
  queue_head_ = 0;
  GlobalRelabel(sink);
  for (int k = adj_start_[static_cast<size_t>(source)]; k < adj_start_[static_cast<size_t>(source) + 1]; ++k) {
    int a = adj_[static_cast<size_t>(k)];
    double r = residual_[static_cast<size_t>(a)];
    if (r <= kEpsilon) continue;
    int v = head_[static_cast<size_t>(a)];
    residual_[static_cast<size_t>(a)] = 0;
    residual_[static_cast<size_t>(a ^ 1)] += r;
    excess_[static_cast<size_t>(v)] += r;
    if (v != sink && !in_queue_[static_cast<size_t>(v)]) {
      in_queue_[static_cast<size_t>(v)] = 1;
      queue_.push_back(v);
    }
  }
  const long relabel_period = 6 * static_cast<long>(n) + static_cast<long>(tail_.size()) / 2;
  while (queue_head_ < queue_.size()) {
    int u = queue_[queue_head_++];
    in_queue_[static_cast<size_t>(u)] = 0;
    Discharge(u);
    if (excess_[static_cast<size_t>(u)] > kEpsilon && height_[static_cast<size_t>(u)] < num_nodes_ &&
        !in_queue_[static_cast<size_t>(u)]) {
      in_queue_[static_cast<size_t>(u)] = 1;
      queue_.push_back(u);
    }
    if (work_since_relabel_ > relabel_period) GlobalRelabel(sink);
    if (queue_head_ > 4096 && queue_head_ * 2 > queue_.size()) {  // keep the queue compact
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(queue_head_));
      queue_head_ = 0;
    }
  }
  // Source side: nodes that cannot reach the sink in the residual network.
  side_.assign(n, 1);
  side_[static_cast<size_t>(sink)] = 0;
  bfs_.clear();
  bfs_.push_back(sink);
  for (size_t i = 0; i < bfs_.size(); ++i) {
    int v = bfs_[i];
    for (int k = adj_start_[static_cast<size_t>(v)]; k < adj_start_[static_cast<size_t>(v) + 1]; ++k) {
      int a = adj_[static_cast<size_t>(k)];
      int u = head_[static_cast<size_t>(a)];
      if (side_[static_cast<size_t>(u)] && residual_[static_cast<size_t>(a ^ 1)] > kEpsilon) {
        side_[static_cast<size_t>(u)] = 0;
        bfs_.push_back(u);
      }
    }
  }
  double value = excess_[static_cast<size_t>(sink)];
  return value > finite_total + 0.5 ? unbounded : value;
}

}  // namespace wattcut
