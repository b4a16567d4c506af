#include "wattcut/solver/bounded_min_cut.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

namespace wattcut {
namespace {

// A network of arcs with lower and upper bounds, BoundedMinCut's input.
struct BoundedNetwork {
  int num_nodes = 0;
  std::vector<BoundedArc> arcs;
};

// A random DAG from node 0 (source) to node n-1 (sink) in which every node lies on a
// source-sink path, like a critical DAG, with lower <= upper on every arc.
BoundedNetwork RandomBoundedNetwork(std::mt19937& rng) {
  std::uniform_int_distribution<int> size(3, 9);
  std::uniform_real_distribution<double> bound(0.0, 4.0);
  std::bernoulli_distribution extra(0.3), unbounded(0.2);
  BoundedNetwork net;
  net.num_nodes = size(rng);
  const int n = net.num_nodes;
  auto add = [&](int u, int v) {
    double lo = bound(rng), hi = lo + bound(rng);
    if (unbounded(rng)) hi = MaxFlow::kInfinity;
    if (extra(rng)) lo = 0;
    net.arcs.push_back({u, v, lo, hi});
  };
  for (int v = 1; v < n; ++v) add(std::uniform_int_distribution<int>(0, v - 1)(rng), v);
  for (int u = 0; u < n - 1; ++u) add(u, std::uniform_int_distribution<int>(u + 1, n - 1)(rng));
  for (int u = 0; u < n; ++u) {
    for (int v = u + 1; v < n; ++v) {
      if (extra(rng)) add(u, v);
    }
  }
  return net;
}

// A cut's value with the nodes in `mask` on the source side: the upper bounds of the arcs it
// cuts forward less the lower bounds of those it cuts backward.
double BoundedCutValue(const BoundedNetwork& net, unsigned mask) {
  double value = 0;
  for (const BoundedArc& a : net.arcs) {
    bool from_s = (mask >> a.from) & 1u, to_s = (mask >> a.to) & 1u;
    if (from_s && !to_s) value += a.upper;
    if (!from_s && to_s) value -= a.lower;
  }
  return value;
}

// Brute force over every cut with the source on one side and the sink on the other.
double BruteForceBoundedMinCut(const BoundedNetwork& net) {
  double best = std::numeric_limits<double>::infinity();
  const int n = net.num_nodes;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (!(mask & 1u) || (mask >> (n - 1)) & 1u) continue;
    best = std::min(best, BoundedCutValue(net, mask));
  }
  return best;
}

// (series-parallel reduction on/off) x (push-relabel / Dinic)
class BoundedMinCutTest : public ::testing::TestWithParam<std::tuple<bool, BoundedMinCut::Engine>> {};

TEST_P(BoundedMinCutTest, MatchesBruteForceOnRandomNetworks) {
  const bool reduce = std::get<0>(GetParam());
  std::mt19937 rng(7);
  int found = 0;
  for (int trial = 0; trial < 400; ++trial) {
    BoundedNetwork net = RandomBoundedNetwork(rng);
    BoundedMinCut cut;
    cut.set_reduce(reduce);
    cut.set_engine(std::get<1>(GetParam()));
    cut.Reset(net.num_nodes);
    for (const BoundedArc& a : net.arcs) cut.AddArc(a.from, a.to, a.lower, a.upper);
    double brute = BruteForceBoundedMinCut(net);
    BoundedMinCut::Outcome outcome = cut.Run(0, net.num_nodes - 1);
    if (brute >= MaxFlow::kInfinity / 2) {
      // No finite cut. The reduction may first find the bounds infeasible; both stop the solver.
      EXPECT_NE(outcome, BoundedMinCut::Outcome::kFound) << "trial " << trial;
      continue;
    }
    if (outcome == BoundedMinCut::Outcome::kInfeasible) continue;  // series bounds conflict
    ASSERT_EQ(outcome, BoundedMinCut::Outcome::kFound) << "trial " << trial;
    EXPECT_NEAR(cut.cut_value(), brute, 1e-7) << "trial " << trial;
    // The crossings reported per arc add up to the same value.
    double from_crossings = 0;
    for (size_t i = 0; i < net.arcs.size(); ++i) {
      int c = cut.Crossing(static_cast<int>(i));
      if (c > 0) from_crossings += net.arcs[i].upper;
      if (c < 0) from_crossings -= net.arcs[i].lower;
    }
    EXPECT_NEAR(from_crossings, brute, 1e-7) << "trial " << trial;
    ++found;
  }
  EXPECT_GT(found, 200);
}

INSTANTIATE_TEST_SUITE_P(ReductionAndEngine, BoundedMinCutTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(BoundedMinCut::Engine::kPreflow,
                                                                                 BoundedMinCut::Engine::kDinic)));

TEST(BoundedMinCut, SeriesPairWithConflictingBoundsIsInfeasible) {
  BoundedMinCut cut;
  cut.Reset(3);
  cut.AddArc(0, 1, 5, 6);  // must carry >= 5
  cut.AddArc(1, 2, 0, 2);  // can carry <= 2
  EXPECT_EQ(cut.Run(0, 2), BoundedMinCut::Outcome::kInfeasible);
}

}  // namespace
}  // namespace wattcut
