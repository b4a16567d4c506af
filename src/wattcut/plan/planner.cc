#include "wattcut/plan/planner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "wattcut/dag/computation_dag.h"
#include "wattcut/dag/topological_order.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/backward_split.h"
#include "wattcut/profile/chunk_split.h"
#include "wattcut/profile/operation_options.h"
#include "wattcut/solver/frontier_solver.h"

namespace wattcut {

namespace {

std::string Where(int stage, InstructionKind kind) {
  return "stage " + std::to_string(stage) + " " + std::string(InstructionName(kind));
}

}  // namespace

int PipelineDevices(const Profile& profile, const PlannerOptions& options) {
  return options.virtual_stages > 0 ? profile.num_stages() / options.virtual_stages : profile.num_stages();
}

bool PlanSplitsMeasuredBackward(const Profile& profile, const PlannerOptions& options) {
  return SplitsBackward(options.schedule) && NeedsBackwardSplit(profile);
}

Result<PlanningProblem> BuildPlanningProblem(const Profile& measured, const PlannerOptions& options) {
  if (measured.num_stages() < 1) return Error{"the profile has no stages"};
  if (!(options.unit_time_s > 0) || !std::isfinite(options.unit_time_s)) {
    return Error{"unit_time_s must be a positive number of seconds"};
  }
  if (!(options.noise_factor > 0 && options.noise_factor <= 1)) {
    return Error{"noise_factor must be in (0, 1]"};
  }
  if (!(options.p2p_power_w >= 0) || !std::isfinite(options.p2p_power_w)) {
    return Error{"p2p_power_w must be a non-negative number of watts"};
  }
  if (options.virtual_stages < 1) {
    return Error{"virtual_stages must be >= 1, got " + std::to_string(options.virtual_stages)};
  }
  if (measured.num_stages() % options.virtual_stages != 0) {
    return Error{"the profile has " + std::to_string(measured.num_stages()) + " stages, not a multiple of the " +
                 std::to_string(options.virtual_stages) +
                 " virtual stages (the interleaved schedule needs devices x virtual stages profile stages)"};
  }
  const int num_devices = PipelineDevices(measured, options);
  // The limits, each before the work it bounds (planning_limits.h); a split backward is two
  // computations.
  const bool split = SplitsBackward(options.schedule);
  if (Status s = CheckPipelineShape(measured.num_stages(), options.num_microbatches, split ? 3 : 2); !s.ok()) {
    return s.error();
  }
  // A split schedule on a profile that measured only whole backwards plans their halves.
  const Profile split_profile = split && NeedsBackwardSplit(measured) ? WithSplitBackward(measured) : Profile();
  const Profile& profile = split_profile.num_stages() > 0 ? split_profile : measured;
  const std::vector<InstructionKind> kinds =
      split ? std::vector<InstructionKind>{InstructionKind::kForward, InstructionKind::kBackwardInput,
                                           InstructionKind::kBackwardWeight}
            : std::vector<InstructionKind>{InstructionKind::kForward, InstructionKind::kBackward};

  // The options of every (stage, instruction) the schedule runs: as many as the profile has
  // rows. Their quantised durations give the size of the cost tables before any is allocated.
  const auto num_stages = static_cast<size_t>(profile.num_stages());
  std::vector<std::array<OperationOptions, kNumInstructionKinds>> stage_options(num_stages);
  int64_t table_entries = 0;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (InstructionKind kind : kinds) {
      if (profile.measurements(s, kind).empty() && split) {
        return Error{Where(s, kind) +
                     ": no measurements (a zero-bubble schedule needs backward_input and "
                     "backward_weight rows, or backward rows to split in halves)"};
      }
      Result<OperationOptions> opts = BuildOperationOptions(profile.measurements(s, kind), options.unit_time_s,
                                                            options.noise_factor, options.p2p_power_w);
      if (!opts.ok()) return Error{Where(s, kind) + ": " + opts.error().message};
      // Both ends are in [1, 2^53]: no overflow, and the sum stops growing at the limit.
      table_entries += opts->options.back().duration_units - opts->options.front().duration_units + 1;
      if (Status st = CheckDurationTableEntries(table_entries, options.unit_time_s); !st.ok()) return st.error();
      stage_options[static_cast<size_t>(s)][static_cast<size_t>(kind)] = std::move(*opts);
    }
  }

  Result<PipelineSchedule> schedule =
      BuildPipelineSchedule(options.schedule, num_devices, options.num_microbatches, options.virtual_stages);
  if (!schedule.ok()) return schedule.error();
  Result<ComputationDag> dag = BuildComputationDag(*schedule);
  if (!dag.ok()) return dag.error();

  // One cost table per (stage, instruction) the schedule runs.
  TimeCostProblem problem;
  Frontier::Setup setup;
  setup.unit_time_s = options.unit_time_s;
  setup.p2p_power_w = options.p2p_power_w;
  // Forward and backward options per stage; all kinds' when the backward is split.
  setup.options.assign(num_stages, std::vector<std::vector<std::pair<int64_t, int>>>(split ? kNumInstructionKinds : 2));
  // table_of[stage][kind]: the cost table's index.
  std::vector<std::array<int, kNumInstructionKinds>> table_of(num_stages);
  // Per table: the largest effective energy magnitude, for the energy bound.
  std::vector<double> largest_cost_j;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (InstructionKind kind : kinds) {
      const OperationOptions& opts = stage_options[static_cast<size_t>(s)][static_cast<size_t>(kind)];
      auto& plan_options = setup.options[static_cast<size_t>(s)][static_cast<size_t>(kind)];
      for (const OperationOption& o : opts.options) plan_options.emplace_back(o.duration_units, o.freq_mhz);
      CostTable table = BuildCostTable(opts, options.cost_model);
      double largest = 0;
      for (size_t i = 0; i < table.cost_j.size(); ++i) {
        if (!std::isfinite(table.cost_j[i])) {
          return Error{Where(s, kind) + ": the " + std::string(CostModelName(options.cost_model)) +
                       " cost model is not finite at " + std::to_string(table.min_duration + static_cast<int64_t>(i)) +
                       " unit times"};
        }
        largest = std::max(largest, std::fabs(table.cost_j[i]));
      }
      largest_cost_j.push_back(largest);
      table_of[static_cast<size_t>(s)][static_cast<size_t>(kind)] = static_cast<int>(problem.cost_tables.size());
      problem.cost_tables.push_back(std::move(table));
    }
  }
  for (const auto& node : dag->nodes) {
    problem.cost_table.push_back(
        table_of[static_cast<size_t>(node.profile_stage)][static_cast<size_t>(node.computation.kind)]);
  }

  // The frontier's size, known before solving: one point per unit time between the
  // slowest iteration (every computation at its longest duration) and the fastest.
  std::vector<double> longest(dag->nodes.size()), shortest(dag->nodes.size());
  double energy_bound_j = 0;
  for (size_t v = 0; v < dag->nodes.size(); ++v) {
    const auto table = static_cast<size_t>(problem.cost_table[v]);
    longest[v] = static_cast<double>(problem.cost_tables[table].max_duration);
    shortest[v] = static_cast<double>(problem.cost_tables[table].min_duration);
    energy_bound_j += largest_cost_j[table];
  }
  const double slowest_units = LongestPath(dag->nodes.size(), dag->edges, longest);
  const double fastest_units = LongestPath(dag->nodes.size(), dag->edges, shortest);
  double shortest_time_s = std::numeric_limits<double>::infinity();
  for (const auto& by_kind : stage_options) {
    for (InstructionKind kind : kinds) {
      shortest_time_s = std::min(shortest_time_s, by_kind[static_cast<size_t>(kind)].options.front().time_s);
    }
  }
  if (Status st =
          CheckFrontierSize(slowest_units, fastest_units, dag->num_nodes(), options.unit_time_s, shortest_time_s);
      !st.ok()) {
    return st.error();
  }
  // Blocking power is drawn per device (GPU), however many chunks it runs.
  energy_bound_j += static_cast<double>(num_devices) * slowest_units * options.unit_time_s * options.p2p_power_w;
  if (Status st = CheckIterationEnergy(energy_bound_j); !st.ok()) return st.error();

  problem.precedences = dag->edges;
  setup.schedule = std::move(*schedule);
  return PlanningProblem{std::move(problem), std::move(setup)};
}

Result<Frontier> SolveFrontier(const PlanningProblem& planning) {
  const Frontier::Setup& setup = planning.setup;
  FrontierSolver solver(planning.problem);
  solver.Init();
  Frontier frontier(setup, solver.durations());
  // Blocking power per GPU (the schedule's devices), not per chunk.
  const double devices = static_cast<double>(setup.schedule.size());
  auto record = [&](std::vector<DurationChange> changes) {
    FrontierPoint point;
    point.duration_units = solver.makespan();
    point.time_s = static_cast<double>(solver.makespan()) * setup.unit_time_s;
    point.effective_energy_j = solver.total_cost();
    point.energy_j = point.effective_energy_j + devices * point.time_s * setup.p2p_power_w;
    frontier.AddPoint(point, std::move(changes));
  };
  record({});
  int64_t previous = solver.makespan();
  while (solver.Step()) {
    std::vector<DurationChange> changes;
    for (int32_t a : solver.last_changes()) changes.push_back({a, solver.durations()[static_cast<size_t>(a)]});
    if (solver.makespan() >= previous) {
      return Error{"internal error: a solver step did not shorten the iteration (" + std::to_string(previous) + " -> " +
                   std::to_string(solver.makespan()) + " units); please report this profile"};
    }
    previous = solver.makespan();
    record(std::move(changes));
  }
  return frontier;
}

Result<Frontier> ComputeFrontier(const Profile& profile, const PlannerOptions& options) {
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  if (!planning.ok()) return planning.error();
  return SolveFrontier(*planning);
}

Result<Frontier> ComputeFrontierFromDeviceProfile(const Profile& per_device, const PlannerOptions& options) {
  if (options.virtual_stages <= 1) return ComputeFrontier(per_device, options);
  Result<Profile> chunks = RepeatDeviceRowsPerChunk(per_device, options.virtual_stages);
  if (!chunks.ok()) return chunks.error();
  return ComputeFrontier(*chunks, options);
}

}  // namespace wattcut
