// The DAG a pipeline schedule builds (dag/computation_dag.h over the planner's schedule), as a
// generic DAG (dag/dag_file.h) that users can edit and plan with `wattcut dag frontier`.
//
// Every computation is an operation named "<instruction> d<device> c<chunk> m<microbatch>"
// ("forward d0 c0 m3", "backward_input d2 c0 m0"): its instruction (forward, backward,
// backward_input, backward_weight), the pipeline device that runs it, the device's model
// chunk (0 unless interleaved) and the microbatch. Its options are the profile's
// measurements of its model piece and instruction, every one of them (time, energy, and the
// frequency in MHz as the knob; a split schedule on a profile without backward_input /
// backward_weight rows gets the halves of the backward, as the planner plans them). Devices
// "d0", "d1", ... carry the p2p (blocking) power; the file's unit time is the planner's.
// Operations come in the planner's order (device-major, schedule order) and edges in the
// DAG's, so the file plans to the same frontier as the pipeline.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/dag/computation_dag.h"
#include "wattcut/dag/dag_file.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile.h"

namespace wattcut {

// "forward d0 c0 m3".
std::string PipelineOperationName(const ComputationDag::Node& node);

// Fails as BuildPlanningProblem does on options the profile cannot be planned with.
Result<GenericDag> PipelineDag(const Profile& profile, const PlannerOptions& options);

// PipelineDag as `wattcut.dag/v1` text.
Result<std::string> PipelineDagText(const Profile& profile, const PlannerOptions& options);

}  // namespace wattcut
