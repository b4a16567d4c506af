#include "wattcut/dag/topological_order.h"

#include <algorithm>

namespace wattcut {

namespace {

// The edges as adjacency lists (compressed: out[first_out[u] .. first_out[u + 1]) are u's).
struct Adjacency {
  std::vector<int> first_out, out, indegree;
};

Adjacency AdjacencyOf(size_t n, const std::vector<std::pair<int, int>>& edges) {
  Adjacency a{std::vector<int>(n + 1, 0), std::vector<int>(edges.size()), std::vector<int>(n, 0)};
  for (auto [u, v] : edges) {
    ++a.first_out[static_cast<size_t>(u) + 1];
    ++a.indegree[static_cast<size_t>(v)];
  }
  for (size_t v = 0; v < n; ++v) a.first_out[v + 1] += a.first_out[v];
  std::vector<int> next(a.first_out.begin(), a.first_out.end() - 1);
  for (auto [u, v] : edges) a.out[static_cast<size_t>(next[static_cast<size_t>(u)]++)] = v;
  return a;
}

}  // namespace

std::vector<int> TopologicalOrder(size_t num_nodes, const std::vector<std::pair<int, int>>& edges) {
  Adjacency a = AdjacencyOf(num_nodes, edges);
  std::vector<int> order, ready;
  order.reserve(num_nodes);
  for (size_t v = 0; v < num_nodes; ++v) {
    if (a.indegree[v] == 0) ready.push_back(static_cast<int>(v));
  }
  while (!ready.empty()) {
    const auto u = static_cast<size_t>(ready.back());
    ready.pop_back();
    order.push_back(static_cast<int>(u));
    for (int k = a.first_out[u]; k < a.first_out[u + 1]; ++k) {
      const auto v = static_cast<size_t>(a.out[static_cast<size_t>(k)]);
      if (--a.indegree[v] == 0) ready.push_back(static_cast<int>(v));
    }
  }
  return order;
}

double LongestPath(size_t num_nodes, const std::vector<std::pair<int, int>>& edges, const std::vector<double>& units) {
  const Adjacency a = AdjacencyOf(num_nodes, edges);
  std::vector<double> start(num_nodes, 0.0);
  double longest = 0;
  for (int node : TopologicalOrder(num_nodes, edges)) {
    const auto u = static_cast<size_t>(node);
    const double end = start[u] + units[u];
    longest = std::max(longest, end);
    for (int k = a.first_out[u]; k < a.first_out[u + 1]; ++k) {
      const auto v = static_cast<size_t>(a.out[static_cast<size_t>(k)]);
      start[v] = std::max(start[v], end);
    }
  }
  return longest;
}

}  // namespace wattcut
