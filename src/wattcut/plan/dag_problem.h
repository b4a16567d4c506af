// Planning a generic DAG (dag/dag_file.h): from its operations' measured options to the
// solver's TimeCostProblem, by the same steps as a pipeline (plan/planner.h): each
// operation's options through BuildOperationOptions (Pareto filter, quantisation, effective
// energy with its device's blocking power), a cost table by the chosen cost model, the
// planning limits; then the frontier solver, and per point the knob of every operation.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/dag/dag_file.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/profile/cost_model.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

struct DagPlannerOptions {
  double unit_time_s = 0.001;
  double noise_factor = 0.95;  // as PlannerOptions::noise_factor
  CostModelKind cost_model = CostModelKind::kExponential;
};

// The unit time to plan `dag` with: `flag_s` when the user gave one, else the file's, else
// `default_s`.
double DagUnitTime(const GenericDag& dag, std::optional<double> flag_s, double default_s);

struct DagPlanningProblem {
  TimeCostProblem problem;  // activity i is operation i; one cost table each
  // Per operation: its options' (duration_units, knob), duration ascending.
  std::vector<std::vector<std::pair<int64_t, int>>> options;
  double unit_time_s = 0;
  double blocking_power_w = 0;  // the devices' in all: drawn over the whole iteration
};

// Errors name the operation ("operation 'F0' (operations[3]): ...") or the limit.
Result<DagPlanningProblem> BuildDagProblem(const GenericDag& dag, const DagPlannerOptions& options);

// The frontier of a DAG, stored like Frontier's: the first point's durations and, per later
// point, the operations whose planned duration changed.
class DagFrontier {
 public:
  DagFrontier(std::vector<std::vector<std::pair<int64_t, int>>> options, std::vector<int64_t> start_durations)
      : options_(std::move(options)), start_durations_(std::move(start_durations)) {}

  void AddPoint(const FrontierPoint& point, std::vector<DurationChange> changes);

  const std::vector<FrontierPoint>& points() const { return points_; }
  int num_operations() const { return static_cast<int>(start_durations_.size()); }
  const std::vector<int64_t>& start_durations() const { return start_durations_; }
  const std::vector<DurationChange>& ChangesAt(size_t index) const { return changes_.at(index); }

  // The knob operation `op` runs at a planned duration: its slowest option whose duration is
  // at most `duration_units` (as Frontier's plans choose frequencies).
  int KnobFor(int op, int64_t duration_units) const;
  // Every operation's planned duration, and knob, at point `index` (from the start durations
  // and the changes up to it).
  std::vector<int64_t> DurationsAt(size_t index) const;
  std::vector<int> KnobsAt(size_t index) const;

 private:
  std::vector<std::vector<std::pair<int64_t, int>>> options_;
  std::vector<int64_t> start_durations_;
  std::vector<FrontierPoint> points_;
  std::vector<std::vector<DurationChange>> changes_;
};

// BuildDagProblem, then the solver from the slowest iteration to the fastest: every point's
// time (duration_units x unit time), effective energy (the cost tables' sum) and energy
// (effective + the devices' blocking power x time).
Result<DagFrontier> ComputeDagFrontier(const GenericDag& dag, const DagPlannerOptions& options);

}  // namespace wattcut
