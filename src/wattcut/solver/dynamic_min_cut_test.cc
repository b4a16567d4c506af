#include "wattcut/solver/dynamic_min_cut.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace wattcut {
namespace {

// A network of capacitated arcs whose nodes also have terminal capacities, DynamicMinCut's input.
struct TerminalNetwork {
  int num_nodes = 0;
  std::vector<std::pair<int, int>> arcs;
  std::vector<double> capacity;  // per arc
  std::vector<double> terminal;  // per node: > 0 from the source, < 0 to the sink
};

// Cut value with the nodes in `mask` on the source side.
double TerminalCutValue(const TerminalNetwork& net, unsigned mask) {
  double value = 0;
  for (size_t k = 0; k < net.arcs.size(); ++k) {
    const bool from_s = (mask >> net.arcs[k].first) & 1u, to_s = (mask >> net.arcs[k].second) & 1u;
    if (from_s && !to_s) value += net.capacity[k];
  }
  for (int v = 0; v < net.num_nodes; ++v) {
    const bool s = (mask >> v) & 1u;
    const double t = net.terminal[static_cast<size_t>(v)];
    if (t > 0 && !s) value += t;
    if (t < 0 && s) value -= t;
  }
  return value;
}

double BruteForceTerminalMinCut(const TerminalNetwork& net) {
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << net.num_nodes); ++mask) best = std::min(best, TerminalCutValue(net, mask));
  return best;
}

unsigned SourceSide(const DynamicMinCut& cut, int num_nodes) {
  unsigned mask = 0;
  for (int v = 0; v < num_nodes; ++v) {
    if (cut.OnSourceSide(v)) mask |= 1u << v;
  }
  return mask;
}

TEST(DynamicMinCut, SmallestSourceSideOfAChain) {
  // source -> 0 (5), 0 -> 1 (2), 1 -> 2 (7), 2 -> sink (5): the cut is arc 0 -> 1.
  DynamicMinCut cut;
  cut.Build(3, {{0, 1}, {1, 2}});
  cut.SetCapacity(0, 2);
  cut.SetCapacity(1, 7);
  cut.SetTerminalCapacity(0, 5);
  cut.SetTerminalCapacity(2, -5);
  cut.Solve();
  EXPECT_TRUE(cut.OnSourceSide(0));
  EXPECT_FALSE(cut.OnSourceSide(1));
  EXPECT_FALSE(cut.OnSourceSide(2));
  // Cheaper at the end now: the flow of 2 on 1 -> 2 exceeds nothing, the cut moves.
  cut.SetTerminalCapacity(2, -1);
  cut.Solve();
  EXPECT_TRUE(cut.OnSourceSide(1));
  EXPECT_TRUE(cut.OnSourceSide(2));
  // Lowering a capacity below its flow keeps the flow valid and the cut minimum.
  cut.SetCapacity(0, 0.5);
  cut.Solve();
  EXPECT_TRUE(cut.OnSourceSide(0));
  EXPECT_FALSE(cut.OnSourceSide(1));
}

// Random networks whose capacities change many times, a few at a time, as in the
// frontier solver: after every Solve() the cut found is a minimum one (brute force), and
// it is the smallest minimum cut (every other minimum cut contains it).
TEST(DynamicMinCut, StaysMinimumWhileCapacitiesChange) {
  std::mt19937 rng(20241201);
  std::uniform_real_distribution<double> amount(0.0, 3.0);
  std::bernoulli_distribution zero(0.25), few(0.3);
  int solves = 0;
  for (int trial = 0; trial < 60; ++trial) {
    TerminalNetwork net;
    net.num_nodes = std::uniform_int_distribution<int>(2, 10)(rng);
    for (int u = 0; u < net.num_nodes; ++u) {
      for (int v = 0; v < net.num_nodes; ++v) {
        if (u != v && std::bernoulli_distribution(0.3)(rng)) net.arcs.emplace_back(u, v);
      }
    }
    net.capacity.assign(net.arcs.size(), 0.0);
    net.terminal.assign(static_cast<size_t>(net.num_nodes), 0.0);
    DynamicMinCut cut;
    cut.Build(net.num_nodes, net.arcs);
    for (int round = 0; round < 25; ++round) {
      // Change all capacities in the first round, then a few.
      for (size_t k = 0; k < net.arcs.size(); ++k) {
        if (round > 0 && !few(rng)) continue;
        net.capacity[k] = zero(rng) ? 0.0 : amount(rng);
        cut.SetCapacity(static_cast<int>(k), net.capacity[k]);
      }
      for (int v = 0; v < net.num_nodes; ++v) {
        if (round > 0 && !few(rng)) continue;
        net.terminal[static_cast<size_t>(v)] = zero(rng) ? 0.0 : amount(rng) - 1.5;
        cut.SetTerminalCapacity(v, net.terminal[static_cast<size_t>(v)]);
      }
      cut.Solve();
      ++solves;
      SCOPED_TRACE("trial " + std::to_string(trial) + ", round " + std::to_string(round));
      const unsigned found = SourceSide(cut, net.num_nodes);
      const double best = BruteForceTerminalMinCut(net);
      ASSERT_NEAR(TerminalCutValue(net, found), best, 1e-9);
      for (unsigned mask = 0; mask < (1u << net.num_nodes); ++mask) {
        if (std::abs(TerminalCutValue(net, mask) - best) <= 1e-9) {
          ASSERT_EQ(mask & found, found) << "a minimum cut with a smaller source side: " << mask;
        }
      }
    }
  }
  EXPECT_EQ(solves, 60 * 25);
}

// A chain far deeper than a call stack survives when every node is one more recursion
// level: 1,000,000 nodes in a row (Pull once recursed once per BFS level and died with
// SIGSEGV at ~100,000 levels on an 8 MB stack). source -> 0 (5), i -> i+1 (3) except one
// bottleneck arc (1), last -> sink (5): the cut is the bottleneck; then the bottleneck
// moves and the warm flow is repaired over the whole depth again.
TEST(DynamicMinCut, ChainOfAMillionNodes) {
  constexpr int kNodes = 1'000'000;
  std::vector<std::pair<int, int>> arcs;
  arcs.reserve(kNodes - 1);
  for (int v = 0; v + 1 < kNodes; ++v) arcs.emplace_back(v, v + 1);
  DynamicMinCut cut;
  cut.Build(kNodes, arcs);
  const int bottleneck = kNodes / 2 + 17;  // arc bottleneck: bottleneck -> bottleneck + 1
  for (int a = 0; a + 1 < kNodes; ++a) cut.SetCapacity(a, a == bottleneck ? 1.0 : 3.0);
  cut.SetTerminalCapacity(0, 5);
  cut.SetTerminalCapacity(kNodes - 1, -5);
  cut.Solve();
  auto expect_cut_after = [&](int last_source_side) {
    int wrong = 0, first_wrong = -1;
    for (int v = 0; v < kNodes; ++v) {
      if (cut.OnSourceSide(v) != (v <= last_source_side)) {
        if (wrong++ == 0) first_wrong = v;
      }
    }
    EXPECT_EQ(wrong, 0) << "first node on the wrong side: " << first_wrong;
  };
  expect_cut_after(bottleneck);
  // A tighter arc near the start: the flow of 1 already through it stays, so the new cut
  // is that arc, with the smallest source side.
  cut.SetCapacity(10, 0.5);
  cut.Solve();
  expect_cut_after(10);
  // Widen both and narrow the sink's arc to 2: every arc of the chain now carries more
  // than the sink takes, so the cut is the sink's arc and every node is on the source side.
  cut.SetCapacity(10, 3.0);
  cut.SetCapacity(bottleneck, 3.0);
  cut.SetTerminalCapacity(kNodes - 1, -2);
  cut.Solve();
  expect_cut_after(kNodes - 1);
}

}  // namespace
}  // namespace wattcut
