#include "wattcut/plan/dag_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "wattcut/dag/topological_order.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/operation_options.h"
#include "wattcut/solver/frontier_solver.h"

namespace wattcut {

namespace {

std::string Where(const GenericDag& dag, size_t op) {
  return "operation '" + dag.operations[op].name + "' (operations[" + std::to_string(op) + "])";
}

}  // namespace

double DagUnitTime(const GenericDag& dag, std::optional<double> flag_s, double default_s) {
  if (flag_s) return *flag_s;
  return dag.unit_time_s.value_or(default_s);
}

Result<DagPlanningProblem> BuildDagProblem(const GenericDag& dag, const DagPlannerOptions& options) {
  if (!(options.unit_time_s > 0) || !std::isfinite(options.unit_time_s)) {
    return Error{"unit_time_s must be a positive number of seconds"};
  }
  if (!(options.noise_factor > 0 && options.noise_factor <= 1)) return Error{"noise_factor must be in (0, 1]"};
  if (dag.operations.empty()) return Error{"the DAG has no operations"};
  if (static_cast<int64_t>(dag.operations.size()) > kMaxComputations) {
    return Error{"the DAG has " + std::to_string(dag.operations.size()) + " operations, more than " +
                 std::to_string(kMaxComputations)};
  }
  DagPlanningProblem result;
  result.unit_time_s = options.unit_time_s;
  for (const DagDevice& device : dag.devices) result.blocking_power_w += device.blocking_power_w;

  const size_t n = dag.operations.size();
  std::vector<OperationOptions> op_options(n);
  int64_t table_entries = 0;
  double shortest_time_s = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    const DagOperation& op = dag.operations[i];
    const double blocking_w = op.device >= 0 ? dag.devices.at(static_cast<size_t>(op.device)).blocking_power_w : 0.0;
    std::vector<Measurement> measurements;
    measurements.reserve(op.options.size());
    for (const DagOption& o : op.options) measurements.push_back({o.knob, o.time_s, o.energy_j});
    Result<OperationOptions> built =
        BuildOperationOptions(measurements, options.unit_time_s, options.noise_factor, blocking_w);
    if (!built.ok()) return built.error().WithContext(Where(dag, i) + ": ");
    table_entries += built->options.back().duration_units - built->options.front().duration_units + 1;
    if (Status s = CheckDurationTableEntries(table_entries, options.unit_time_s); !s.ok()) return s.error();
    shortest_time_s = std::min(shortest_time_s, built->options.front().time_s);
    op_options[i] = std::move(*built);
  }

  std::vector<double> longest(n), shortest(n);
  double energy_bound_j = 0;
  result.options.resize(n);
  for (size_t i = 0; i < n; ++i) {
    for (const OperationOption& o : op_options[i].options) result.options[i].emplace_back(o.duration_units, o.freq_mhz);
    CostTable table = BuildCostTable(op_options[i], options.cost_model);
    double largest = 0;
    for (size_t k = 0; k < table.cost_j.size(); ++k) {
      if (!std::isfinite(table.cost_j[k])) {
        return Error{Where(dag, i) + ": the " + std::string(CostModelName(options.cost_model)) +
                     " cost model is not finite at " + std::to_string(table.min_duration + static_cast<int64_t>(k)) +
                     " unit times"};
      }
      largest = std::max(largest, std::fabs(table.cost_j[k]));
    }
    energy_bound_j += largest;
    longest[i] = static_cast<double>(table.max_duration);
    shortest[i] = static_cast<double>(table.min_duration);
    result.problem.cost_table.push_back(static_cast<int>(i));
    result.problem.cost_tables.push_back(std::move(table));
  }
  const double slowest_units = LongestPath(n, dag.edges, longest);
  const double fastest_units = LongestPath(n, dag.edges, shortest);
  if (Status s = CheckFrontierSize(slowest_units, fastest_units, static_cast<int64_t>(n), options.unit_time_s,
                                   shortest_time_s);
      !s.ok()) {
    return s.error();
  }
  energy_bound_j += slowest_units * options.unit_time_s * result.blocking_power_w;
  if (Status s = CheckIterationEnergy(energy_bound_j); !s.ok()) return s.error();
  result.problem.precedences = dag.edges;
  return result;
}

Result<DagFrontier> ComputeDagFrontier(const GenericDag& dag, const DagPlannerOptions& options) {
  Result<DagPlanningProblem> planning = BuildDagProblem(dag, options);
  if (!planning.ok()) return planning.error();
  return SolveDagFrontier(dag, *planning);
}

Result<DagFrontier> SolveDagFrontier(const GenericDag& dag, const DagPlanningProblem& planning) {
  if (planning.options.size() != dag.operations.size()) {
    return Error{"internal error: the planning problem has " + std::to_string(planning.options.size()) +
                 " operations, the DAG " + std::to_string(dag.operations.size())};
  }
  DagFrontier::Setup setup;
  setup.unit_time_s = planning.unit_time_s;
  setup.devices = dag.devices;
  for (size_t i = 0; i < dag.operations.size(); ++i) {
    setup.operations.push_back({dag.operations[i].name, dag.operations[i].device, planning.options[i]});
  }
  FrontierSolver solver(planning.problem);
  solver.Init();
  DagFrontier frontier(std::move(setup), solver.durations());
  auto record = [&](std::vector<DurationChange> changes) {
    FrontierPoint point;
    point.duration_units = solver.makespan();
    point.time_s = static_cast<double>(solver.makespan()) * planning.unit_time_s;
    point.effective_energy_j = solver.total_cost();
    point.energy_j = point.effective_energy_j + point.time_s * planning.blocking_power_w;
    frontier.AddPoint(point, std::move(changes));
  };
  record({});
  int64_t previous = solver.makespan();
  while (solver.Step()) {
    if (solver.makespan() >= previous) {
      return Error{"internal error: a solver step did not shorten the iteration (" + std::to_string(previous) + " -> " +
                   std::to_string(solver.makespan()) + " units); please report this DAG"};
    }
    previous = solver.makespan();
    std::vector<DurationChange> changes;
    for (int32_t a : solver.last_changes()) changes.push_back({a, solver.durations()[static_cast<size_t>(a)]});
    record(std::move(changes));
  }
  return frontier;
}

}  // namespace wattcut
