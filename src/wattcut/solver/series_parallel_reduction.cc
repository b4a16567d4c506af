#include "wattcut/solver/series_parallel_reduction.h"

#include <algorithm>

#include "wattcut/solver/max_flow.h"

namespace wattcut {
namespace {

double AddBounds(double a, double b) { return std::min(MaxFlow::kInfinity, a + b); }

uint64_t Key(int from, int to) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(from)) << 32) | static_cast<uint32_t>(to);
}

}  // namespace

int SeriesParallelReduction::AddArc(const BoundedArc& arc, Kind kind, int first, int second) {
  nodes_.push_back(Node{arc, kind, true, first, second});
  return static_cast<int>(nodes_.size()) - 1;
}

void SeriesParallelReduction::Insert(int id) {
  const BoundedArc arc = nodes_[static_cast<size_t>(id)].arc;
  auto [it, inserted] = by_ends_.emplace(Key(arc.from, arc.to), id);
  if (inserted) {
    out_[static_cast<size_t>(arc.from)].push_back(id);
    in_[static_cast<size_t>(arc.to)].push_back(id);
    ++out_degree_[static_cast<size_t>(arc.from)];
    ++in_degree_[static_cast<size_t>(arc.to)];
    return;
  }
  // Parallel to an existing arc: replace both with their sum.
  int other = it->second;
  const BoundedArc& o = nodes_[static_cast<size_t>(other)].arc;
  BoundedArc merged{arc.from, arc.to, AddBounds(o.lower, arc.lower), AddBounds(o.upper, arc.upper)};
  nodes_[static_cast<size_t>(other)].alive = false;
  nodes_[static_cast<size_t>(id)].alive = false;
  int p = AddArc(merged, Kind::kParallel, other, id);
  it->second = p;
  out_[static_cast<size_t>(arc.from)].push_back(p);
  in_[static_cast<size_t>(arc.to)].push_back(p);
  // Degrees unchanged (one alive arc replaced by one); an end may now be a series node.
  pending_.push_back(arc.from);
  pending_.push_back(arc.to);
}

void SeriesParallelReduction::TrySeries(int v) {
  const auto vs = static_cast<size_t>(v);
  if (v == source_ || v == sink_ || in_degree_[vs] != 1 || out_degree_[vs] != 1) return;
  auto alive_of = [&](std::vector<int>& list) {
    // Compact the lazily deleted list and return its single alive arc.
    list.erase(std::remove_if(list.begin(), list.end(), [&](int id) { return !nodes_[static_cast<size_t>(id)].alive; }),
               list.end());
    return list.front();
  };
  int a = alive_of(in_[vs]);
  int b = alive_of(out_[vs]);
  const BoundedArc arc_a = nodes_[static_cast<size_t>(a)].arc;
  const BoundedArc arc_b = nodes_[static_cast<size_t>(b)].arc;
  BoundedArc joined{arc_a.from, arc_b.to, std::max(arc_a.lower, arc_b.lower), std::min(arc_a.upper, arc_b.upper)};
  if (joined.lower > joined.upper + 1e-9 * (1 + joined.upper)) infeasible_ = true;
  nodes_[static_cast<size_t>(a)].alive = false;
  nodes_[static_cast<size_t>(b)].alive = false;
  by_ends_.erase(Key(arc_a.from, arc_a.to));
  by_ends_.erase(Key(arc_b.from, arc_b.to));
  in_degree_[vs] = out_degree_[vs] = 0;
  --out_degree_[static_cast<size_t>(arc_a.from)];
  --in_degree_[static_cast<size_t>(arc_b.to)];
  int s = AddArc(joined, Kind::kSeries, a, b);
  Insert(s);
  pending_.push_back(arc_a.from);
  pending_.push_back(arc_b.to);
}

bool SeriesParallelReduction::Run(int num_nodes, const std::vector<BoundedArc>& arcs, int source, int sink) {
  num_original_ = static_cast<int>(arcs.size());
  source_ = source;
  sink_ = sink;
  infeasible_ = false;
  nodes_.clear();
  by_ends_.clear();
  by_ends_.reserve(arcs.size() * 2);
  in_.assign(static_cast<size_t>(num_nodes), {});
  out_.assign(static_cast<size_t>(num_nodes), {});
  in_degree_.assign(static_cast<size_t>(num_nodes), 0);
  out_degree_.assign(static_cast<size_t>(num_nodes), 0);
  pending_.clear();
  for (const BoundedArc& arc : arcs) AddArc(arc, Kind::kOriginal, -1, -1);
  for (int i = 0; i < num_original_; ++i) Insert(i);
  for (int v = 0; v < num_nodes; ++v) pending_.push_back(v);
  while (!pending_.empty()) {
    int v = pending_.back();
    pending_.pop_back();
    TrySeries(v);
  }
  reduced_.clear();
  reduced_ids_.clear();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].alive) {
      reduced_.push_back(nodes_[i].arc);
      reduced_ids_.push_back(static_cast<int>(i));
    }
  }
  return !infeasible_;
}

void SeriesParallelReduction::Expand(const std::vector<int8_t>& crossing,
                                     std::vector<int8_t>& original_crossing) const {
  original_crossing.assign(static_cast<size_t>(num_original_), 0);
  std::vector<std::pair<int, int8_t>> stack;
  for (size_t i = 0; i < reduced_ids_.size(); ++i) {
    if (crossing[i] != 0) stack.emplace_back(reduced_ids_[i], crossing[i]);
  }
  while (!stack.empty()) {
    auto [id, direction] = stack.back();
    stack.pop_back();
    const Node& node = nodes_[static_cast<size_t>(id)];
    switch (node.kind) {
      case Kind::kOriginal:
        original_crossing[static_cast<size_t>(id)] = direction;
        break;
      case Kind::kParallel:
        stack.emplace_back(node.first, direction);
        stack.emplace_back(node.second, direction);
        break;
      case Kind::kSeries: {
        const BoundedArc& a = nodes_[static_cast<size_t>(node.first)].arc;
        const BoundedArc& b = nodes_[static_cast<size_t>(node.second)].arc;
        bool first = direction > 0 ? a.upper <= b.upper : a.lower >= b.lower;
        stack.emplace_back(first ? node.first : node.second, direction);
        break;
      }
    }
  }
}

}  // namespace wattcut
