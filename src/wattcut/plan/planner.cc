#include "wattcut/plan/planner.h"

#include <cmath>
#include <string>

#include "wattcut/dag/computation_dag.h"
#include "wattcut/profile/operation_options.h"
#include "wattcut/solver/frontier_solver.h"

namespace wattcut {

Result<PlanningProblem> BuildPlanningProblem(const Profile& profile, const PlannerOptions& options) {
  if (profile.num_stages() < 1) return Error{"the profile has no stages"};
  if (!(options.unit_time_s > 0) || !std::isfinite(options.unit_time_s)) {
    return Error{"--unit-time must be a positive number of seconds"};
  }
  if (!(options.noise_factor > 0 && options.noise_factor <= 1)) {
    return Error{"--noise-factor must be in (0, 1]"};
  }
  if (!(options.p2p_power_w >= 0) || !std::isfinite(options.p2p_power_w)) {
    return Error{"--p2p-power must be a non-negative number of watts"};
  }
  Result<PipelineSchedule> schedule =
      BuildPipelineSchedule(options.schedule, profile.num_stages(), options.num_microbatches);
  if (!schedule.ok()) return schedule.error();
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  if (!dag.ok()) return dag.error();

  // One cost table per (stage, instruction).
  TimeCostProblem problem;
  Frontier::Setup setup;
  setup.schedule = *schedule;
  setup.unit_time_s = options.unit_time_s;
  setup.p2p_power_w = options.p2p_power_w;
  setup.options.resize(static_cast<size_t>(profile.num_stages()));
  int64_t longest_units = 0;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      Result<OperationOptions> opts = BuildOperationOptions(profile.measurements(s, kind), options.unit_time_s,
                                                            options.noise_factor, options.p2p_power_w);
      if (!opts.ok()) {
        return Error{"stage " + std::to_string(s) + " " + std::string(InstructionName(kind)) + ": " +
                     opts.error().message};
      }
      auto& stage_options = setup.options[static_cast<size_t>(s)].emplace_back();
      for (const OperationOption& o : opts->options) stage_options.emplace_back(o.duration_units, o.freq_mhz);
      problem.cost_tables.push_back(BuildCostTable(*opts, options.cost_model));
      longest_units = std::max(longest_units, problem.cost_tables.back().max_duration);
    }
  }
  // Guard against a unit time so small that the frontier would have billions of points.
  const double total_units = static_cast<double>(longest_units) * static_cast<double>(dag->num_nodes());
  if (total_units > 5e9) {
    return Error{"--unit-time " + std::to_string(options.unit_time_s) +
                 " s is too fine for this pipeline (the frontier would have over a billion points)"};
  }
  for (const auto& node : dag->nodes) {
    problem.cost_table.push_back(node.stage * kNumInstructionKinds + static_cast<int>(node.computation.kind));
  }
  problem.precedences = dag->edges;
  return PlanningProblem{std::move(problem), std::move(setup)};
}

Result<Frontier> ComputeFrontier(const Profile& profile, const PlannerOptions& options) {
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  if (!planning.ok()) return planning.error();
  FrontierSolver solver(planning->problem);
  solver.Init();
  Frontier frontier(std::move(planning->setup), solver.durations());
  const double stages = profile.num_stages();
  auto record = [&](std::vector<DurationChange> changes) {
    FrontierPoint point;
    point.duration_units = solver.makespan();
    point.time_s = static_cast<double>(solver.makespan()) * options.unit_time_s;
    point.effective_energy_j = solver.total_cost();
    point.energy_j = point.effective_energy_j + stages * point.time_s * options.p2p_power_w;
    frontier.AddPoint(point, std::move(changes));
  };
  record({});
  int64_t previous = solver.makespan();
  while (solver.Step()) {
    std::vector<DurationChange> changes;
    for (int32_t a : solver.last_changes()) changes.push_back({a, solver.durations()[static_cast<size_t>(a)]});
    if (solver.makespan() >= previous) {
      return Error{"internal error: a solver step did not shorten the iteration (" + std::to_string(previous) +
                   " -> " + std::to_string(solver.makespan()) + " units); please report this profile"};
    }
    previous = solver.makespan();
    record(std::move(changes));
  }
  return frontier;
}

}  // namespace wattcut
