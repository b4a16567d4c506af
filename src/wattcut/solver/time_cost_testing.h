// For the solver's tests: random convex cost tables, and the makespan a problem's durations give
// (the longest path, dag/topological_order.h), to check the frontier solver against.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "wattcut/solver/time_cost_problem.h"

namespace wattcut {

// A random convex, non-increasing cost table: min_duration uniform in [min_duration_from,
// min_duration_to], max_duration min_duration + a span uniform in [0, max_span], decreasing slopes
// in magnitude of 0.05-3 J a unit from a cost of 20-30 J.
CostTable RandomConvexCostTable(std::mt19937& rng, int min_duration_from, int min_duration_to, int max_span);

// The critical path of the problem's DAG at `durations`.
int64_t MakespanOf(const TimeCostProblem& problem, const std::vector<int64_t>& durations);

}  // namespace wattcut
