// The iterative min-cut frontier solver (Phillips-Dessouky style; PERSEUS.md section 5).
//
// Works on the activity-on-arc form of a TimeCostProblem. Init() puts every activity at
// its longest (cheapest) duration. Each Step() then:
//   a. finds the critical arcs (zero slack) with a forward and a backward pass;
//   b. gives each critical activity arc the flow bounds lb = c(d) - c(d+1) (what
//      slowing down by one unit saves; 0 at the longest duration) and
//      ub = c(d-1) - c(d) (what speeding up by one unit costs; unbounded at the
//      shortest duration); dummy arcs get [0, unbounded);
//   c. finds a minimum cut of the critical DAG under those bounds (by default on a flow
//      network kept from the previous step, see dynamic_min_cut.h; set_warm_start(false)
//      computes each cut from scratch with BoundedMinCut instead);
//   d. speeds up by one unit the activities crossing the cut forward and slows down by
//      one unit those crossing it backward (those already at their longest duration
//      stay: their lb is 0, so they would save nothing).
// Step() returns false, changing nothing, when no cut of finite cost exists: some
// critical path is at its shortest everywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/solver/bounded_min_cut.h"
#include "wattcut/solver/dynamic_min_cut.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

class FrontierSolver {
 public:
  explicit FrontierSolver(const TimeCostProblem& problem);

  // true (default): keep the flow network between steps. false: compute every cut from
  // scratch. Both give the same frontier; the first is much faster. Call before Init().
  void set_warm_start(bool warm) { warm_start_ = warm; }

  // Every activity at its longest duration; computes the schedule times. Calling it
  // again starts over.
  void Init();
  // One unit-time reduction (see above). Returns false when none is possible.
  bool Step();

  int64_t makespan() const { return makespan_; }
  // Sum of the activities' costs at their current durations.
  double total_cost() const;
  const std::vector<int64_t>& durations() const { return duration_; }
  // Activities whose duration the last Step() changed.
  const std::vector<int32_t>& last_changes() const { return changed_; }
  // Size of the current critical DAG (for benchmarks and diagnostics).
  int last_critical_arcs() const;

 private:
  void ComputeTimes();
  // Step c, two ways; both fill crossing_arcs_ (the critical activity arcs crossing the
  // cut: +1 forward, -1 backward).
  bool CutWarm();
  bool CutFromScratch();

  const TimeCostProblem& problem_;
  int num_nodes_ = 0;  // AOA nodes: 2 per activity + source + sink
  int source_ = 0, sink_ = 0;
  struct Arc {
    int from, to;
    int activity;  // -1 for a dummy arc
  };
  std::vector<Arc> arcs_;
  // Flow bounds (lb, ub) of an arc at the current durations.
  std::pair<double, double> Bounds(const Arc& arc) const;
  // Nodes are numbered topologically and arcs sorted by tail (see the constructor).
  std::vector<int> arc_of_activity_;
  std::vector<int64_t> arc_length_;     // current duration of each arc (0 for dummies)
  std::vector<int> arc_from_, arc_to_;  // arcs_[a].from and .to, for the sweeps
  std::vector<int> first_out_arc_;      // node v's out-arcs: first_out_arc_[v] .. [v + 1]
  std::vector<int> flipped_arcs_;       // scratch: arcs whose criticality changed
  std::vector<int64_t> duration_;
  std::vector<int64_t> earliest_, latest_;
  int64_t makespan_ = 0;
  std::vector<int32_t> changed_;
  std::vector<int> local_id_;
  std::vector<int> critical_arcs_;
  std::vector<uint8_t> is_critical_;
  std::vector<std::pair<int, int>> crossing_arcs_;
  int64_t shortest_makespan_ = 0;
  bool warm_start_ = true;
  // From-scratch engine.
  BoundedMinCut cut_;
  // Warm engine: the AOA arcs with capacity ub - lb (0 when not critical); each node's
  // excess of lower bounds is its terminal capacity; the AOA source and sink are tied to
  // the terminals by unbounded_ (more than any finite cut can cost).
  DynamicMinCut min_cut_;
  std::vector<std::pair<int, int>> flow_arcs_;
  std::vector<double> node_excess_;  // lower bounds in minus out, per node
  std::vector<double> arc_lower_;    // the lower bound each arc contributes to node_excess_
  std::vector<int> dirty_arcs_, dirty_nodes_;
  std::vector<uint32_t> dirty_arc_stamp_, dirty_node_stamp_;
  uint32_t stamp_ = 0;
  double unbounded_ = 0;
};

}  // namespace wattcut
