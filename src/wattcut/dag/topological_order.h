// The two walks every DAG of the planner needs, over nodes 0..n-1 and (from, to) edges: an order
// in which every edge goes forward (Kahn's algorithm), and the longest path. Written once for the
// pipeline DAG (plan/planner.cc), the generic DAG's check (dag/dag_file.cc) and its planning
// (plan/dag_problem.cc).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace wattcut {

// The nodes in an order where every edge goes forward. Holds fewer than `num_nodes` nodes when the
// edges make a cycle: the ones left out are on a cycle or after one.
std::vector<int> TopologicalOrder(size_t num_nodes, const std::vector<std::pair<int, int>>& edges);

// The longest path with `units[v]` per node, in doubles (exact up to 2^53, and no overflow however
// large the units: callers check their limits on it). The edges must be acyclic; nodes on a cycle
// would count as not there.
double LongestPath(size_t num_nodes, const std::vector<std::pair<int, int>>& edges, const std::vector<double>& units);

}  // namespace wattcut
