#include "wattcut/solver/time_cost_testing.h"

#include <algorithm>
#include <functional>

#include "wattcut/dag/topological_order.h"

namespace wattcut {

CostTable RandomConvexCostTable(std::mt19937& rng, int min_duration_from, int min_duration_to, int max_span) {
  std::uniform_int_distribution<int> min_d(min_duration_from, min_duration_to), span(0, max_span);
  std::uniform_real_distribution<double> slope(0.05, 3.0), base(0.0, 10.0);
  CostTable table;
  table.min_duration = min_d(rng);
  table.max_duration = table.min_duration + span(rng);
  // Decreasing slopes in magnitude: convex and non-increasing.
  std::vector<double> slopes;
  for (int64_t i = table.min_duration; i < table.max_duration; ++i) slopes.push_back(slope(rng));
  std::sort(slopes.begin(), slopes.end(), std::greater<>());
  double cost = base(rng) + 20;
  table.cost_j.push_back(cost);
  for (double s : slopes) table.cost_j.push_back(cost -= s);
  return table;
}

int64_t MakespanOf(const TimeCostProblem& problem, const std::vector<int64_t>& durations) {
  const std::vector<double> units(durations.begin(), durations.end());
  return static_cast<int64_t>(LongestPath(durations.size(), problem.precedences, units));
}

}  // namespace wattcut
