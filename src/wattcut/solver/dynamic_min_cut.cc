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
  // A depth-first search down the levels, one frame per node on the current path, kept
  // on pull_path_ rather than the call stack (a path is as long as the search has levels:
  // hundreds of thousands in a long pipeline). A frame pulls up to `limit` into its node:
  // at level 0 from the node's source capacity; above it from the admissible arc at
  // next_slot_ (the arc u -> node, u one level lower), one child frame at a time. A
  // node that cannot pass on any more is spent for this phase (level -2).
  pull_path_.clear();
  pull_path_.push_back({node, limit, 0.0});
  double returned = 0;      // what the frame just popped pulled into its node
  bool from_child = false;  // the top frame resumes after a child frame
  while (true) {
    PullFrame& frame = pull_path_.back();
    const auto v = static_cast<size_t>(frame.node);
    bool done = false;
    if (from_child) {
      from_child = false;
      Slot& out = slots_[static_cast<size_t>(next_slot_[v])];
      if (returned > 0) {
        Slot& in = slots_[static_cast<size_t>(out.mate)];
        in.residual -= returned;
        out.residual += returned;
        frame.total += returned;
        // Keep this arc (next_slot_ stays on it): it may carry more.
        if (frame.limit - frame.total <= kEpsilon) done = true;
      }
      if (!done) ++next_slot_[v];
    } else if (level_[v] == 0) {
      const double pulled = std::min(frame.limit, terminal_residual_[v]);
      terminal_residual_[v] -= pulled;
      if (terminal_residual_[v] <= kEpsilon) level_[v] = -2;  // spent for this phase
      frame.total = pulled;
      done = true;
    }
    if (!done) {
      // The next admissible arc into the node, or none: then it is spent.
      int& k = next_slot_[v];
      for (; k < out_start_[v + 1]; ++k) {
        const Slot& out = slots_[static_cast<size_t>(k)];
        const auto u = static_cast<size_t>(out.head);
        const Slot& in = slots_[static_cast<size_t>(out.mate)];  // the arc u -> node
        if (search_of_[u] != search_ || level_[u] != level_[v] - 1 || in.residual <= kEpsilon) continue;
        break;
      }
      if (k < out_start_[v + 1]) {
        const Slot& out = slots_[static_cast<size_t>(k)];
        const double child_limit = std::min(frame.limit - frame.total, slots_[static_cast<size_t>(out.mate)].residual);
        pull_path_.push_back({out.head, child_limit, 0.0});  // invalidates `frame`
        continue;
      }
      level_[v] = -2;  // nothing more reaches it in this phase
    }
    returned = pull_path_.back().total;
    pull_path_.pop_back();
    if (pull_path_.empty()) return returned;
    from_child = true;
  }
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
