#include "wattcut/plan/dag_export.h"

#include "wattcut/profile/backward_split.h"

namespace wattcut {

std::string PipelineOperationName(const ComputationDag::Node& node) {
  return std::string(InstructionName(node.computation.kind)) + " d" + std::to_string(node.stage) + " c" +
         std::to_string(node.computation.chunk) + " m" + std::to_string(node.computation.microbatch);
}

Result<GenericDag> PipelineDag(const Profile& measured, const PlannerOptions& options) {
  // Every check the planner makes (shape, limits, options), and its schedule.
  Result<PlanningProblem> planning = BuildPlanningProblem(measured, options);
  if (!planning.ok()) return planning.error();
  Result<ComputationDag> dag = BuildComputationDag(planning->setup.schedule);
  if (!dag.ok()) return dag.error();
  const Profile split = PlanSplitsMeasuredBackward(measured, options) ? WithSplitBackward(measured) : Profile();
  const Profile& profile = split.num_stages() > 0 ? split : measured;

  GenericDag result;
  result.unit_time_s = options.unit_time_s;
  const int devices = PipelineDevices(measured, options);
  for (int d = 0; d < devices; ++d) result.devices.push_back({"d" + std::to_string(d), options.p2p_power_w});
  result.operations.reserve(dag->nodes.size());
  for (const ComputationDag::Node& node : dag->nodes) {
    DagOperation op;
    op.name = PipelineOperationName(node);
    op.device = node.stage;
    for (const Measurement& m : profile.measurements(node.profile_stage, node.computation.kind)) {
      op.options.push_back({m.time_s, m.energy_j, m.freq_mhz});
    }
    result.operations.push_back(std::move(op));
  }
  result.edges = dag->edges;
  return result;
}

Result<std::string> PipelineDagText(const Profile& profile, const PlannerOptions& options) {
  Result<GenericDag> dag = PipelineDag(profile, options);
  if (!dag.ok()) return dag.error();
  return DagText(*dag);
}

}  // namespace wattcut
