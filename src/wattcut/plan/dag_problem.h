// Planning a generic DAG (dag/dag_file.h): from its operations' measured options to the
// solver's TimeCostProblem, by the same steps as a pipeline (plan/planner.h): each
// operation's options through BuildOperationOptions (Pareto filter, quantisation, effective
// energy with its device's blocking power), a cost table by the chosen cost model, the
// planning limits; then the frontier solver (plan/dag_frontier.h holds its points and knobs).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/dag/dag_file.h"
#include "wattcut/plan/dag_frontier.h"
#include "wattcut/plan/planner_defaults.h"
#include "wattcut/profile/cost_model.h"
#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

struct DagPlannerOptions {
  double unit_time_s = kDefaultUnitTimeS;
  double noise_factor = kDefaultNoiseFactor;  // as PlannerOptions::noise_factor
  CostModelKind cost_model = kDefaultCostModel;
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

// The solver on `planning` (BuildDagProblem's of `dag`) from the slowest iteration to the
// fastest: every point's time (duration_units x unit time), effective energy (the cost
// tables' sum) and energy (effective + the devices' blocking power x time), and the DAG's
// names, devices and options, so that every point's knobs can be read back.
Result<DagFrontier> SolveDagFrontier(const GenericDag& dag, const DagPlanningProblem& planning);
// BuildDagProblem, then SolveDagFrontier.
Result<DagFrontier> ComputeDagFrontier(const GenericDag& dag, const DagPlannerOptions& options);

}  // namespace wattcut
