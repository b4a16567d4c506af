#include "wattcut/solver/frontier_solver.h"

#include <algorithm>
#include <limits>

namespace wattcut {

FrontierSolver::FrontierSolver(const TimeCostProblem& problem) : problem_(problem) {
  const int n = problem.num_activities();
  num_nodes_ = 2 * n + 2;
  int source = 2 * n, sink = 2 * n + 1;
  std::vector<int> indegree(static_cast<size_t>(n), 0), outdegree(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) arcs_.push_back({2 * i, 2 * i + 1, i});
  for (auto [u, v] : problem.precedences) {
    arcs_.push_back({2 * u + 1, 2 * v, -1});
    ++outdegree[static_cast<size_t>(u)];
    ++indegree[static_cast<size_t>(v)];
  }
  for (int i = 0; i < n; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) arcs_.push_back({source, 2 * i, -1});
    if (outdegree[static_cast<size_t>(i)] == 0) arcs_.push_back({2 * i + 1, sink, -1});
  }
  // Number the nodes in a topological order (Kahn; the caller guarantees acyclic
  // precedences) and sort the arcs by tail: both longest-path passes are then single
  // sweeps over the arc array, forwards and backwards.
  const auto nn = static_cast<size_t>(num_nodes_);
  std::vector<std::vector<int>> out(nn);
  std::vector<int> deg(nn, 0);
  for (const Arc& a : arcs_) {
    out[static_cast<size_t>(a.from)].push_back(a.to);
    ++deg[static_cast<size_t>(a.to)];
  }
  std::vector<int> order(nn, -1), ready;
  for (int v = 0; v < num_nodes_; ++v) {
    if (deg[static_cast<size_t>(v)] == 0) ready.push_back(v);
  }
  int next = 0;
  for (size_t i = 0; i < ready.size(); ++i) {  // FIFO keeps numbering close to pipeline order
    int u = ready[i];
    order[static_cast<size_t>(u)] = next++;
    for (int v : out[static_cast<size_t>(u)]) {
      if (--deg[static_cast<size_t>(v)] == 0) ready.push_back(v);
    }
  }
  for (Arc& a : arcs_) {
    a.from = order[static_cast<size_t>(a.from)];
    a.to = order[static_cast<size_t>(a.to)];
  }
  source_ = order[static_cast<size_t>(source)];
  sink_ = order[static_cast<size_t>(sink)];
  std::sort(arcs_.begin(), arcs_.end(),
            [](const Arc& x, const Arc& y) { return x.from != y.from ? x.from < y.from : x.to < y.to; });
  arc_of_activity_.assign(static_cast<size_t>(n), -1);
  for (size_t ai = 0; ai < arcs_.size(); ++ai) {
    if (arcs_[ai].activity >= 0) arc_of_activity_[static_cast<size_t>(arcs_[ai].activity)] = static_cast<int>(ai);
  }
  arc_length_.assign(arcs_.size(), 0);
  local_id_.assign(nn, -1);
  for (const Arc& a : arcs_) {
    arc_from_.push_back(a.from);
    arc_to_.push_back(a.to);
  }
  first_out_arc_.assign(nn + 1, 0);
  for (const Arc& a : arcs_) ++first_out_arc_[static_cast<size_t>(a.from) + 1];
  for (size_t v = 0; v < nn; ++v) first_out_arc_[v + 1] += first_out_arc_[v];
  earliest_.assign(nn, 0);
  latest_.assign(nn, 0);

  // Warm engine: fixed shape (built by Init), capacities set per step.
  for (const Arc& a : arcs_) flow_arcs_.emplace_back(a.from, a.to);
  // Any finite cut costs at most sum(ub - lb) + sum(lb) <= 2 * sum of steepest slopes.
  double steepest_total = 0;
  for (int i = 0; i < problem.num_activities(); ++i) {
    const CostTable& t = problem.table_of(i);
    if (t.max_duration > t.min_duration)
      steepest_total += std::max(0.0, t.at(t.min_duration) - t.at(t.min_duration + 1));
  }
  unbounded_ = 4 * steepest_total + 1;
  // The shortest makespan: every activity at its shortest duration.
  std::vector<int64_t> earliest(nn, 0);
  for (const Arc& a : arcs_) {
    const int64_t length = a.activity >= 0 ? problem.table_of(a.activity).min_duration : 0;
    int64_t& e = earliest[static_cast<size_t>(a.to)];
    e = std::max(e, earliest[static_cast<size_t>(a.from)] + length);
  }
  shortest_makespan_ = earliest[static_cast<size_t>(sink_)];
}

void FrontierSolver::Init() {
  const int n = problem_.num_activities();
  duration_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    duration_[static_cast<size_t>(i)] = problem_.table_of(i).max_duration;
    arc_length_[static_cast<size_t>(arc_of_activity_[static_cast<size_t>(i)])] = duration_[static_cast<size_t>(i)];
  }
  changed_.clear();
  // A fresh warm-start state: no flow, every arc's bounds to be set by the first step.
  min_cut_.Build(num_nodes_, flow_arcs_);
  min_cut_.SetTerminalCapacity(source_, unbounded_);
  min_cut_.SetTerminalCapacity(sink_, -unbounded_);
  is_critical_.clear();
  node_excess_.clear();
  dirty_arcs_.clear();
  ComputeTimes();
}

double FrontierSolver::total_cost() const {
  double sum = 0;
  for (int i = 0; i < problem_.num_activities(); ++i) {
    sum += problem_.table_of(i).at(duration_[static_cast<size_t>(i)]);
  }
  return sum;
}

void FrontierSolver::ComputeTimes() {
  // Nodes are numbered topologically and arcs sorted by tail: a tail's earliest time is
  // final when its first out-arc is reached. Sweeping the nodes backwards, a node's
  // out-arcs give its latest time and, both of their end times being final, which of
  // them are critical (zero slack). Plain pointers: the compiler need not reload them
  // after every store.
  const size_t num_arcs = arcs_.size();
  const int* from = arc_from_.data();
  const int* to = arc_to_.data();
  const int64_t* length = arc_length_.data();
  int64_t* earliest = earliest_.data();
  int64_t* latest = latest_.data();
  std::fill(earliest_.begin(), earliest_.end(), 0);
  for (size_t a = 0; a < num_arcs; ++a) {
    earliest[to[a]] = std::max(earliest[to[a]], earliest[from[a]] + length[a]);
  }
  makespan_ = earliest[sink_];
  const bool first = is_critical_.size() != num_arcs;
  if (first) is_critical_.assign(num_arcs, 0);
  uint8_t* is_critical = is_critical_.data();
  const int* first_out = first_out_arc_.data();
  flipped_arcs_.resize(num_arcs);
  int* flipped = flipped_arcs_.data();
  size_t num_flipped = 0;
  const int64_t makespan = makespan_;
  for (int v = num_nodes_; v-- > 0;) {
    const int64_t e = earliest[v];
    int64_t l = makespan;
    for (int a = first_out[v], end = first_out[v + 1]; a < end; ++a) {
      const int64_t latest_to = latest[to[a]];
      l = std::min(l, latest_to - length[a]);
      const uint8_t critical = e + length[a] == latest_to ? 1 : 0;
      if (critical != is_critical[a]) {  // rare
        is_critical[a] = critical;
        flipped[num_flipped++] = a;
      }
    }
    latest[v] = l;
  }
  if (first) {
    for (size_t a = 0; a < num_arcs; ++a) dirty_arcs_.push_back(static_cast<int>(a));  // new bounds
  } else {
    dirty_arcs_.insert(dirty_arcs_.end(), flipped, flipped + num_flipped);
  }
}

int FrontierSolver::last_critical_arcs() const {
  return static_cast<int>(std::count(is_critical_.begin(), is_critical_.end(), 1));
}

std::pair<double, double> FrontierSolver::Bounds(const Arc& a) const {
  double lb = 0, ub = MaxFlow::kInfinity;
  if (a.activity >= 0) {
    const CostTable& table = problem_.table_of(a.activity);
    int64_t d = duration_[static_cast<size_t>(a.activity)];
    if (d < table.max_duration) lb = std::max(0.0, table.at(d) - table.at(d + 1));
    if (d > table.min_duration) ub = std::max(lb, table.at(d - 1) - table.at(d));
  }
  return {lb, ub};
}

bool FrontierSolver::Step() {
  changed_.clear();
  // A critical path at its shortest everywhere (the only way for every cut to cross an
  // unbounded arc forward): no finite cut.
  if (makespan_ <= shortest_makespan_) return false;
  // a (done by ComputeTimes), b, c: bounds and a minimum cut.
  crossing_arcs_.clear();
  if (!(warm_start_ ? CutWarm() : CutFromScratch())) return false;

  // d. Speed up forward-crossing activities, slow down backward-crossing ones.
  for (auto [ai, crossing] : crossing_arcs_) {
    const Arc& a = arcs_[static_cast<size_t>(ai)];
    int64_t& d = duration_[static_cast<size_t>(a.activity)];
    const CostTable& table = problem_.table_of(a.activity);
    if (crossing > 0) {
      --d;  // finite cut: d > min_duration
    } else if (d < table.max_duration) {
      ++d;
    } else {
      continue;
    }
    changed_.push_back(a.activity);
    dirty_arcs_.push_back(ai);
    arc_length_[static_cast<size_t>(ai)] = d;
  }
  ComputeTimes();
  return true;
}

bool FrontierSolver::CutWarm() {
  // Only arcs whose criticality or duration changed get new bounds; the lower-bound
  // excess of their end nodes is updated by the difference.
  if (node_excess_.size() != static_cast<size_t>(num_nodes_)) {
    node_excess_.assign(static_cast<size_t>(num_nodes_), 0.0);
    arc_lower_.assign(arcs_.size(), 0.0);
    dirty_arc_stamp_.assign(arcs_.size(), 0);
    dirty_node_stamp_.assign(static_cast<size_t>(num_nodes_), 0);
  }
  ++stamp_;
  dirty_nodes_.clear();
  for (int ai : dirty_arcs_) {
    const auto a = static_cast<size_t>(ai);
    if (dirty_arc_stamp_[a] == stamp_) continue;
    dirty_arc_stamp_[a] = stamp_;
    double lower = 0, capacity = 0;
    if (is_critical_[a]) {
      auto [lb, ub] = Bounds(arcs_[a]);
      lower = lb;
      capacity = ub >= MaxFlow::kInfinity ? unbounded_ : ub - lb;
    }
    if (lower != arc_lower_[a]) {
      node_excess_[static_cast<size_t>(arcs_[a].to)] += lower - arc_lower_[a];
      node_excess_[static_cast<size_t>(arcs_[a].from)] -= lower - arc_lower_[a];
      arc_lower_[a] = lower;
      for (int v : {arcs_[a].from, arcs_[a].to}) {
        if (dirty_node_stamp_[static_cast<size_t>(v)] != stamp_) {
          dirty_node_stamp_[static_cast<size_t>(v)] = stamp_;
          dirty_nodes_.push_back(v);
        }
      }
    }
    if (capacity != min_cut_.capacity(ai)) min_cut_.SetCapacity(ai, capacity);
  }
  dirty_arcs_.clear();
  for (int v : dirty_nodes_) {
    if (v == source_ || v == sink_) continue;
    double e = node_excess_[static_cast<size_t>(v)];
    if (e <= DynamicMinCut::kEpsilon && e >= -DynamicMinCut::kEpsilon) e = 0;
    if (e != min_cut_.terminal_capacity(v)) min_cut_.SetTerminalCapacity(v, e);
  }
  min_cut_.Solve();
  if (!min_cut_.OnSourceSide(source_) || min_cut_.OnSourceSide(sink_)) return false;  // (not reached)
  for (int ai : arc_of_activity_) {
    if (!is_critical_[static_cast<size_t>(ai)]) continue;
    const Arc& a = arcs_[static_cast<size_t>(ai)];
    const bool from_s = min_cut_.OnSourceSide(a.from), to_s = min_cut_.OnSourceSide(a.to);
    if (from_s != to_s) crossing_arcs_.emplace_back(ai, from_s ? 1 : -1);
  }
  return true;
}

bool FrontierSolver::CutFromScratch() {
  dirty_arcs_.clear();  // only the warm engine keeps bounds between steps
  critical_arcs_.clear();
  for (size_t ai = 0; ai < arcs_.size(); ++ai) {
    if (is_critical_[ai]) critical_arcs_.push_back(static_cast<int>(ai));
  }
  // The critical DAG's nodes, numbered compactly.
  int num_local = 0;
  std::vector<int> touched;
  for (int ai : critical_arcs_) {
    const Arc& a = arcs_[static_cast<size_t>(ai)];
    for (int v : {a.from, a.to}) {
      if (local_id_[static_cast<size_t>(v)] < 0) {
        local_id_[static_cast<size_t>(v)] = num_local++;
        touched.push_back(v);
      }
    }
  }
  cut_.Reset(num_local);
  for (int ai : critical_arcs_) {
    const Arc& a = arcs_[static_cast<size_t>(ai)];
    auto [lb, ub] = Bounds(a);
    cut_.AddArc(local_id_[static_cast<size_t>(a.from)], local_id_[static_cast<size_t>(a.to)], lb, ub);
  }
  BoundedMinCut::Outcome outcome =
      cut_.Run(local_id_[static_cast<size_t>(source_)], local_id_[static_cast<size_t>(sink_)]);
  for (int v : touched) local_id_[static_cast<size_t>(v)] = -1;
  if (outcome != BoundedMinCut::Outcome::kFound) return false;
  for (size_t k = 0; k < critical_arcs_.size(); ++k) {
    const int ai = critical_arcs_[k];
    const int crossing = cut_.Crossing(static_cast<int>(k));
    if (crossing != 0 && arcs_[static_cast<size_t>(ai)].activity >= 0) crossing_arcs_.emplace_back(ai, crossing);
  }
  return true;
}

}  // namespace wattcut
