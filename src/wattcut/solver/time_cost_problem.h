// The discrete time-cost trade-off problem the frontier solver works on: activities
// with integer durations and convex, non-increasing costs, and precedences among them
// (activity on node). The makespan is the longest path through the DAG.
#pragma once

#include <utility>
#include <vector>

#include "wattcut/profile/cost_model.h"

namespace wattcut {

struct TimeCostProblem {
  std::vector<std::pair<int, int>> precedences;  // (before, after) activity indices
  std::vector<int> cost_table;                   // per activity: index into cost_tables
  std::vector<CostTable> cost_tables;

  int num_activities() const { return static_cast<int>(cost_table.size()); }
  const CostTable& table_of(int activity) const {
    return cost_tables[static_cast<size_t>(cost_table[static_cast<size_t>(activity)])];
  }
};

}  // namespace wattcut
