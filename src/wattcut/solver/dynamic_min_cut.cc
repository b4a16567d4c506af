#include "wattcut/solver/dynamic_min_cut.h"

#include <algorithm>
#include <climits>

namespace wattcut {

void DynamicMinCut::Build(int num_nodes, const std::vector<std::pair<int, int>>& arcs) {
  num_nodes_ = num_nodes;
  const auto n = static_cast<size_t>(num_nodes);
  out_start_.assign(n + 1, 0);
  for (const auto& [from, to] : arcs) {
    ++out_start_[static_cast<size_t>(from) + 1];
    ++out_start_[static_cast<size_t>(to) + 1];
  }
  for (size_t v = 0; v < n; ++v) out_start_[v + 1] += out_start_[v];
  slots_.assign(2 * arcs.size(), Slot{0, 0, 0.0});
  forward_slot_.assign(arcs.size(), 0);
  std::vector<int> next(out_start_.begin(), out_start_.end() - 1);
  for (size_t k = 0; k < arcs.size(); ++k) {
    const auto [from, to] = arcs[k];
    const int forward = next[static_cast<size_t>(from)]++;
    const int reverse = next[static_cast<size_t>(to)]++;
    slots_[static_cast<size_t>(forward)] = {to, reverse, 0.0};
    slots_[static_cast<size_t>(reverse)] = {from, forward, 0.0};
    forward_slot_[k] = forward;
  }
  capacity_.assign(arcs.size(), 0.0);
  terminal_.assign(n, 0.0);
  terminal_residual_.assign(n, 0.0);
  sources_.clear();
  listed_.assign(n, 0);
  level_.assign(n, -1);
  search_of_.assign(n, 0);
  search_ = 0;
  next_slot_.assign(n, 0);
  queue_.clear();
  sinks_.clear();
}

void DynamicMinCut::NoteSource(int node) {
  const auto v = static_cast<size_t>(node);
  if (terminal_residual_[v] > kEpsilon && !listed_[v]) {
    listed_[v] = 1;
    sources_.push_back(node);
  }
}

void DynamicMinCut::SetCapacity(int arc, double capacity) {
  Slot& forward = slots_[static_cast<size_t>(forward_slot_[static_cast<size_t>(arc)])];
  Slot& reverse = slots_[static_cast<size_t>(forward.mate)];
  capacity = std::max(0.0, capacity);
  capacity_[static_cast<size_t>(arc)] = capacity;
  const double flow = reverse.residual;
  if (flow > capacity) {
    // Keep flow = capacity. The tail now receives more than it sends: it takes that much
    // less from the source (or sends that much more to the sink); the head, short of
    // it, takes it from the source.
    const double surplus = flow - capacity;
    forward.residual = 0;
    reverse.residual = capacity;
    terminal_residual_[static_cast<size_t>(reverse.head)] += surplus;
    terminal_residual_[static_cast<size_t>(forward.head)] -= surplus;
    NoteSource(reverse.head);
  } else {
    forward.residual = capacity - flow;
  }
}

void DynamicMinCut::SetTerminalCapacity(int node, double terminal_capacity) {
  const auto v = static_cast<size_t>(node);
  terminal_residual_[v] += terminal_capacity - terminal_[v];
  terminal_[v] = terminal_capacity;
  NoteSource(node);
}

bool DynamicMinCut::SearchLevels() {
  ++search_;
  queue_.clear();
  sinks_.clear();
  size_t kept = 0;
  for (int v : sources_) {
    const auto vs = static_cast<size_t>(v);
    if (terminal_residual_[vs] > kEpsilon) {
      sources_[kept++] = v;
      search_of_[vs] = search_;
      level_[vs] = 0;
      queue_.push_back(v);
    } else {
      listed_[vs] = 0;
    }
  }
  sources_.resize(kept);
  int sink_level = INT_MAX;
  for (size_t i = 0; i < queue_.size(); ++i) {
    const auto u = static_cast<size_t>(queue_[i]);
    const int next_level = level_[u] + 1;
    if (next_level > sink_level) break;
    const Slot* slot = slots_.data() + out_start_[u];
    const Slot* end = slots_.data() + out_start_[u + 1];
    for (; slot != end; ++slot) {
      const auto v = static_cast<size_t>(slot->head);
      if (search_of_[v] == search_ || slot->residual <= kEpsilon) continue;
      search_of_[v] = search_;
      level_[v] = next_level;
      queue_.push_back(static_cast<int>(v));
      if (terminal_residual_[v] < -kEpsilon) {
        sink_level = next_level;
        sinks_.push_back(static_cast<int>(v));
      }
    }
  }
  return !sinks_.empty();
}

double DynamicMinCut::Pull(int node, double limit) {
  const auto v = static_cast<size_t>(node);
  if (level_[v] == 0) {
    const double pulled = std::min(limit, terminal_residual_[v]);
    terminal_residual_[v] -= pulled;
    if (terminal_residual_[v] <= kEpsilon) level_[v] = -2;  // spent for this phase
    return pulled;
  }
  double total = 0;
  for (int& k = next_slot_[v]; k < out_start_[v + 1]; ++k) {
    Slot& out = slots_[static_cast<size_t>(k)];
    const auto u = static_cast<size_t>(out.head);
    Slot& in = slots_[static_cast<size_t>(out.mate)];  // the arc u -> node
    if (search_of_[u] != search_ || level_[u] != level_[v] - 1 || in.residual <= kEpsilon) continue;
    const double pulled = Pull(static_cast<int>(u), std::min(limit - total, in.residual));
    if (pulled > 0) {
      in.residual -= pulled;
      out.residual += pulled;
      total += pulled;
      if (limit - total <= kEpsilon) return total;  // keep this arc: it may carry more
    }
  }
  level_[v] = -2;  // nothing more reaches it in this phase
  return total;
}

void DynamicMinCut::Solve() {
  while (SearchLevels()) {
    for (int v : queue_) next_slot_[static_cast<size_t>(v)] = out_start_[static_cast<size_t>(v)];
    for (int w : sinks_) {
      const auto ws = static_cast<size_t>(w);
      terminal_residual_[ws] += Pull(w, -terminal_residual_[ws]);
    }
  }
}

}  // namespace wattcut
