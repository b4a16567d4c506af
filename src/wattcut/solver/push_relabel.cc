#include "wattcut/solver/push_relabel.h"

#include <algorithm>

namespace wattcut {

void PushRelabel::Build(int num_nodes, const std::vector<std::pair<int, int>>& arcs, int source, int sink) {
  num_nodes_ = num_nodes;
  source_ = source;
  sink_ = sink;
  const auto n = static_cast<size_t>(num_nodes);
  head_.assign(2 * arcs.size(), 0);
  std::vector<int> tail(2 * arcs.size(), 0);
  for (size_t k = 0; k < arcs.size(); ++k) {
    tail[2 * k] = arcs[k].first;
    head_[2 * k] = arcs[k].second;
    tail[2 * k + 1] = arcs[k].second;
    head_[2 * k + 1] = arcs[k].first;
  }
  residual_.assign(2 * arcs.size(), 0.0);
  adj_start_.assign(n + 1, 0);
  for (int t : tail) ++adj_start_[static_cast<size_t>(t) + 1];
  for (size_t v = 0; v < n; ++v) adj_start_[v + 1] += adj_start_[v];
  adj_.resize(tail.size());
  current_.assign(adj_start_.begin(), adj_start_.end() - 1);
  for (size_t a = 0; a < tail.size(); ++a) {
    adj_[static_cast<size_t>(current_[static_cast<size_t>(tail[a])]++)] = static_cast<int>(a);
  }
  current_.assign(adj_start_.begin(), adj_start_.end() - 1);
  height_.assign(n, 0);
  excess_.assign(n, 0.0);
  in_queue_.assign(n, 0);
  side_.assign(n, 0);
}

void PushRelabel::SetCapacity(int arc, double capacity) {
  residual_[static_cast<size_t>(2 * arc)] = std::max(0.0, capacity);
}

void PushRelabel::Activate(int v) {
  if (v != sink_ && v != source_ && !in_queue_[static_cast<size_t>(v)] && excess_[static_cast<size_t>(v)] > kEpsilon) {
    in_queue_[static_cast<size_t>(v)] = 1;
    queue_.push_back(v);
  }
}

void PushRelabel::GlobalRelabel() {
  const int n = num_nodes_;
  std::fill(height_.begin(), height_.end(), n);
  height_[static_cast<size_t>(sink_)] = 0;
  bfs_.clear();
  bfs_.push_back(sink_);
  for (size_t i = 0; i < bfs_.size(); ++i) {
    int v = bfs_[i];
    for (int k = adj_start_[static_cast<size_t>(v)]; k < adj_start_[static_cast<size_t>(v) + 1]; ++k) {
      int a = adj_[static_cast<size_t>(k)];
      int u = head_[static_cast<size_t>(a)];
      if (height_[static_cast<size_t>(u)] == n && u != source_ && residual_[static_cast<size_t>(a ^ 1)] > kEpsilon) {
        height_[static_cast<size_t>(u)] = height_[static_cast<size_t>(v)] + 1;
        bfs_.push_back(u);
      }
    }
  }
  // Nodes per height below n, for the gap heuristic.
  count_.assign(static_cast<size_t>(n) + 1, 0);
  for (int v : bfs_) ++count_[static_cast<size_t>(height_[static_cast<size_t>(v)])];
  std::copy(adj_start_.begin(), adj_start_.end() - 1, current_.begin());
  work_since_relabel_ = 0;
}

void PushRelabel::Discharge(int u) {
  const auto us = static_cast<size_t>(u);
  const int n = num_nodes_;
  while (excess_[us] > kEpsilon && height_[us] < n) {
    if (current_[us] == adj_start_[us + 1]) {
      int lowest = 2 * n;
      for (int k = adj_start_[us]; k < adj_start_[us + 1]; ++k) {
        int a = adj_[static_cast<size_t>(k)];
        if (residual_[static_cast<size_t>(a)] > kEpsilon) {
          lowest = std::min(lowest, height_[static_cast<size_t>(head_[static_cast<size_t>(a)])]);
        }
      }
      const int old_height = height_[us];
      height_[us] = std::min(n, lowest + 1);
      --count_[static_cast<size_t>(old_height)];
      if (height_[us] < n) ++count_[static_cast<size_t>(height_[us])];
      if (count_[static_cast<size_t>(old_height)] == 0 && old_height > 0) {
        // Gap: no node is left at old_height, so nothing above it can reach the sink.
        for (int v = 0; v < n; ++v) {
          int& h = height_[static_cast<size_t>(v)];
          if (h > old_height && h < n) {
            --count_[static_cast<size_t>(h)];
            h = n;
          }
        }
        if (height_[us] < n) --count_[static_cast<size_t>(height_[us])];
        height_[us] = n;
      }
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
      Activate(v);
      if (excess_[us] <= kEpsilon) break;
    }
    ++current_[us];
  }
}

double PushRelabel::Solve() {
  // 1. Saturate the source's arcs.
  const auto ss = static_cast<size_t>(source_);
  for (int k = adj_start_[ss]; k < adj_start_[ss + 1]; ++k) {
    int a = adj_[static_cast<size_t>(k)];
    double r = residual_[static_cast<size_t>(a)];
    if (r <= 0) continue;
    residual_[static_cast<size_t>(a)] = 0;
    residual_[static_cast<size_t>(a ^ 1)] += r;
    excess_[static_cast<size_t>(head_[static_cast<size_t>(a)])] += r;
  }
  // 2. Exact labels, then discharge every active node.
  GlobalRelabel();
  height_[ss] = num_nodes_;
  queue_.clear();
  queue_head_ = 0;
  std::fill(in_queue_.begin(), in_queue_.end(), 0);
  for (int v = 0; v < num_nodes_; ++v) {
    if (height_[static_cast<size_t>(v)] < num_nodes_) Activate(v);
  }
  const long relabel_period = 6 * static_cast<long>(num_nodes_) + static_cast<long>(head_.size()) / 2;
  while (queue_head_ < queue_.size()) {
    int u = queue_[queue_head_++];
    in_queue_[static_cast<size_t>(u)] = 0;
    Discharge(u);
    if (height_[static_cast<size_t>(u)] < num_nodes_) Activate(u);
    if (work_since_relabel_ > relabel_period) GlobalRelabel();
    if (queue_head_ > 4096 && queue_head_ * 2 > queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(queue_head_));
      queue_head_ = 0;
    }
  }
  // 3. Source side: nodes that cannot reach the sink in the residual network, which a
  //    global relabel finds (height n).
  GlobalRelabel();
  for (size_t v = 0; v < side_.size(); ++v) side_[v] = height_[v] >= num_nodes_ ? 1 : 0;
  return excess_[static_cast<size_t>(sink_)];
}

}  // namespace wattcut
