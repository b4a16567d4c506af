#include "wattcut/solver/frontier_solver.h"

#include <algorithm>
#include <limits>

namespace wattcut {

FrontierSolver::FrontierSolver(const TimeCostProblem& problem) : problem_(problem) {
  const int n = problem.num_activities();
  num_nodes_ = 2 * n + 2;
  source_ = 2 * n;
  sink_ = 2 * n + 1;
  std::vector<int> indegree(static_cast<size_t>(n), 0), outdegree(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) arcs_.push_back({2 * i, 2 * i + 1, i});
  for (auto [u, v] : problem.precedences) {
    arcs_.push_back({2 * u + 1, 2 * v, -1});
    ++outdegree[static_cast<size_t>(u)];
    ++indegree[static_cast<size_t>(v)];
  }
  for (int i = 0; i < n; ++i) {
    if (indegree[static_cast<size_t>(i)] == 0) arcs_.push_back({source_, 2 * i, -1});
    if (outdegree[static_cast<size_t>(i)] == 0) arcs_.push_back({2 * i + 1, sink_, -1});
  }
  // CSR adjacency in both directions.
  const auto nn = static_cast<size_t>(num_nodes_);
  out_start_.assign(nn + 1, 0);
  in_start_.assign(nn + 1, 0);
  for (const Arc& a : arcs_) {
    ++out_start_[static_cast<size_t>(a.from) + 1];
    ++in_start_[static_cast<size_t>(a.to) + 1];
  }
  for (size_t v = 0; v < nn; ++v) {
    out_start_[v + 1] += out_start_[v];
    in_start_[v + 1] += in_start_[v];
  }
  out_arcs_.resize(arcs_.size());
  in_arcs_.resize(arcs_.size());
  std::vector<int> out_pos(out_start_.begin(), out_start_.end() - 1);
  std::vector<int> in_pos(in_start_.begin(), in_start_.end() - 1);
  for (size_t a = 0; a < arcs_.size(); ++a) {
    out_arcs_[static_cast<size_t>(out_pos[static_cast<size_t>(arcs_[a].from)]++)] = static_cast<int>(a);
    in_arcs_[static_cast<size_t>(in_pos[static_cast<size_t>(arcs_[a].to)]++)] = static_cast<int>(a);
  }
  // Topological order (Kahn). The caller guarantees acyclic precedences.
  std::vector<int> deg(nn, 0);
  for (const Arc& a : arcs_) ++deg[static_cast<size_t>(a.to)];
  std::vector<int> stack;
  for (int v = 0; v < num_nodes_; ++v) {
    if (deg[static_cast<size_t>(v)] == 0) stack.push_back(v);
  }
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    topo_order_.push_back(u);
    for (int k = out_start_[static_cast<size_t>(u)]; k < out_start_[static_cast<size_t>(u) + 1]; ++k) {
      int v = arcs_[static_cast<size_t>(out_arcs_[static_cast<size_t>(k)])].to;
      if (--deg[static_cast<size_t>(v)] == 0) stack.push_back(v);
    }
  }
  local_id_.assign(nn, -1);
}

void FrontierSolver::Init() {
  const int n = problem_.num_activities();
  duration_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) duration_[static_cast<size_t>(i)] = problem_.table_of(i).max_duration;
  changed_.clear();
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
  const auto nn = static_cast<size_t>(num_nodes_);
  earliest_.assign(nn, 0);
  for (int u : topo_order_) {
    int64_t t = earliest_[static_cast<size_t>(u)];
    for (int k = out_start_[static_cast<size_t>(u)]; k < out_start_[static_cast<size_t>(u) + 1]; ++k) {
      const Arc& a = arcs_[static_cast<size_t>(out_arcs_[static_cast<size_t>(k)])];
      int64_t d = a.activity >= 0 ? duration_[static_cast<size_t>(a.activity)] : 0;
      int64_t& e = earliest_[static_cast<size_t>(a.to)];
      e = std::max(e, t + d);
    }
  }
  makespan_ = earliest_[static_cast<size_t>(sink_)];
  latest_.assign(nn, makespan_);
  for (auto it = topo_order_.rbegin(); it != topo_order_.rend(); ++it) {
    int v = *it;
    int64_t t = latest_[static_cast<size_t>(v)];
    for (int k = in_start_[static_cast<size_t>(v)]; k < in_start_[static_cast<size_t>(v) + 1]; ++k) {
      const Arc& a = arcs_[static_cast<size_t>(in_arcs_[static_cast<size_t>(k)])];
      int64_t d = a.activity >= 0 ? duration_[static_cast<size_t>(a.activity)] : 0;
      int64_t& l = latest_[static_cast<size_t>(a.from)];
      l = std::min(l, t - d);
    }
  }
}

bool FrontierSolver::Step() {
  changed_.clear();
  // a. Critical arcs and their nodes, numbered compactly.
  critical_arcs_.clear();
  int num_local = 0;
  std::vector<int> touched;
  for (size_t ai = 0; ai < arcs_.size(); ++ai) {
    const Arc& a = arcs_[ai];
    int64_t d = a.activity >= 0 ? duration_[static_cast<size_t>(a.activity)] : 0;
    if (earliest_[static_cast<size_t>(a.from)] + d != latest_[static_cast<size_t>(a.to)]) continue;
    critical_arcs_.push_back(static_cast<int>(ai));
    for (int v : {a.from, a.to}) {
      if (local_id_[static_cast<size_t>(v)] < 0) {
        local_id_[static_cast<size_t>(v)] = num_local++;
        touched.push_back(v);
      }
    }
  }
  last_critical_arcs_ = static_cast<int>(critical_arcs_.size());

  // b. Flow bounds.
  cut_.Reset(num_local);
  for (int ai : critical_arcs_) {
    const Arc& a = arcs_[static_cast<size_t>(ai)];
    double lb = 0, ub = MaxFlow::kInfinity;
    if (a.activity >= 0) {
      const CostTable& table = problem_.table_of(a.activity);
      int64_t d = duration_[static_cast<size_t>(a.activity)];
      if (d < table.max_duration) lb = std::max(0.0, table.at(d) - table.at(d + 1));
      if (d > table.min_duration) ub = std::max(lb, table.at(d - 1) - table.at(d));
    }
    cut_.AddArc(local_id_[static_cast<size_t>(a.from)], local_id_[static_cast<size_t>(a.to)], lb, ub);
  }

  // c. Minimum cut.
  BoundedMinCut::Outcome outcome =
      cut_.Run(local_id_[static_cast<size_t>(source_)], local_id_[static_cast<size_t>(sink_)]);

  // d. Speed up forward-crossing activities, slow down backward-crossing ones.
  if (outcome == BoundedMinCut::Outcome::kFound) {
    for (size_t k = 0; k < critical_arcs_.size(); ++k) {
      const Arc& a = arcs_[static_cast<size_t>(critical_arcs_[k])];
      if (a.activity < 0) continue;
      const int crossing = cut_.Crossing(static_cast<int>(k));
      int64_t& d = duration_[static_cast<size_t>(a.activity)];
      const CostTable& table = problem_.table_of(a.activity);
      if (crossing > 0) {
        --d;  // finite cut: d > min_duration
        changed_.push_back(a.activity);
      } else if (crossing < 0 && d < table.max_duration) {
        ++d;
        changed_.push_back(a.activity);
      }
    }
  }
  for (int v : touched) local_id_[static_cast<size_t>(v)] = -1;
  if (outcome != BoundedMinCut::Outcome::kFound) return false;
  ComputeTimes();
  return true;
}

}  // namespace wattcut
