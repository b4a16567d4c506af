// For tests: the exact least cost of a time-cost problem at a deadline, by integer
// programming (GLPK), to check the frontier solver's points against.
#pragma once

#include <cstdint>

#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

// Least total cost with makespan <= deadline over the problem's integer durations, for
// convex cost tables; NaN when infeasible.
double OracleMinCost(const TimeCostProblem& problem, int64_t deadline);

}  // namespace wattcut
