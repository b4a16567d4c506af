// The planner's defaults, each written once: every set of planner settings (the planner's and
// the DAG planner's options, a frontier's setup, the server's job settings, the CLI's arguments,
// a simulated training job) starts from these, so a job planned by the CLI, the server or the
// simulator gets the same plan unless told otherwise.
#pragma once

#include "wattcut/profile/cost_model.h"

namespace wattcut {

// 1 ms: finer than the 10-100 ms of a large model's computation, coarse enough to keep the
// frontier's points (one per unit between the slowest and the fastest iteration) in the
// thousands. A long iteration may need a coarser one (planning_limits.h).
inline constexpr double kDefaultUnitTimeS = 0.001;

// When at most 3 of an instruction's options survive the strict Pareto filter, the filter is
// run again with this tolerance (the reference implementation's retry).
inline constexpr double kDefaultNoiseFactor = 0.95;

// The reference implementation's fit (cost_model.h).
inline constexpr CostModelKind kDefaultCostModel = CostModelKind::kExponential;

}  // namespace wattcut
