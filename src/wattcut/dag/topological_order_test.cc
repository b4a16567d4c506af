#include "wattcut/dag/topological_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace wattcut {
namespace {

// Every edge goes forward in the order.
bool Forward(const std::vector<int>& order, const std::vector<std::pair<int, int>>& edges) {
  std::vector<size_t> position(order.size());
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = i;
  for (auto [u, v] : edges) {
    if (position[static_cast<size_t>(u)] >= position[static_cast<size_t>(v)]) return false;
  }
  return true;
}

TEST(TopologicalOrder, EveryEdgeGoesForward) {
  const std::vector<std::pair<int, int>> edges = {{3, 1}, {1, 0}, {3, 2}, {2, 0}, {4, 3}};
  const std::vector<int> order = TopologicalOrder(5, edges);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_TRUE(Forward(order, edges));
}

TEST(TopologicalOrder, ACycleLeavesItsNodesAndTheOnesAfterItOut) {
  // 0 -> 1 -> 2 -> 1, 2 -> 3; 4 alone.
  const std::vector<int> order = TopologicalOrder(5, {{0, 1}, {1, 2}, {2, 1}, {2, 3}});
  EXPECT_EQ(order.size(), 2u);
  EXPECT_NE(std::find(order.begin(), order.end(), 0), order.end());
  EXPECT_NE(std::find(order.begin(), order.end(), 4), order.end());
}

TEST(LongestPath, TheHeaviestChainOfADiamond) {
  // 0 -> {1, 2} -> 3, units 1, 5, 2, 1: 0-1-3 = 7.
  EXPECT_DOUBLE_EQ(LongestPath(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}, {1, 5, 2, 1}), 7);
  EXPECT_DOUBLE_EQ(LongestPath(3, {}, {4, 9, 2}), 9);  // no edges: the longest node
  EXPECT_DOUBLE_EQ(LongestPath(0, {}, {}), 0);
}

}  // namespace
}  // namespace wattcut
