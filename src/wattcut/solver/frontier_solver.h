// The iterative min-cut frontier solver (Phillips-Dessouky style; PERSEUS.md section 5).
//
// Works on the activity-on-arc form of a TimeCostProblem. Init() puts every activity at
// its longest (cheapest) duration. Each Step() then:
//   a. finds the critical arcs (zero slack) with a forward and a backward pass;
//   b. gives each critical activity arc the flow bounds lb = c(d) - c(d+1) (what
//      slowing down by one unit saves; 0 at the longest duration) and
//      ub = c(d-1) - c(d) (what speeding up by one unit costs; unbounded at the
//      shortest duration); dummy arcs get [0, unbounded);
//   c. finds a minimum cut of the critical DAG under those bounds;
//   d. speeds up by one unit the activities crossing the cut forward and slows down by
//      one unit those crossing it backward (those already at their longest duration
//      stay: their lb is 0, so they would save nothing).
// Step() returns false, changing nothing, when no cut of finite cost exists: some
// critical path is at its shortest everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/solver/bounded_min_cut.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

class FrontierSolver {
 public:
  explicit FrontierSolver(const TimeCostProblem& problem);

  // Every activity at its longest duration; computes the schedule times.
  void Init();
  // One unit-time reduction (see above). Returns false when none is possible.
  bool Step();

  int64_t makespan() const { return makespan_; }
  // Sum of the activities' costs at their current durations.
  double total_cost() const;
  const std::vector<int64_t>& durations() const { return duration_; }
  // Activities whose duration the last Step() changed.
  const std::vector<int32_t>& last_changes() const { return changed_; }
  // Size of the last critical DAG (for benchmarks and diagnostics).
  int last_critical_arcs() const { return last_critical_arcs_; }

 private:
  void ComputeTimes();

  const TimeCostProblem& problem_;
  int num_nodes_ = 0;  // AOA nodes: 2 per activity + source + sink
  int source_ = 0, sink_ = 0;
  struct Arc {
    int from, to;
    int activity;  // -1 for a dummy arc
  };
  std::vector<Arc> arcs_;
  std::vector<int> out_start_, out_arcs_, in_start_, in_arcs_;  // CSR adjacency
  std::vector<int> topo_order_;
  std::vector<int64_t> duration_;
  std::vector<int64_t> earliest_, latest_;
  int64_t makespan_ = 0;
  std::vector<int32_t> changed_;
  std::vector<int> local_id_;
  std::vector<int> critical_arcs_;
  BoundedMinCut cut_;
  int last_critical_arcs_ = 0;
};

}  // namespace wattcut
