#include "wattcut/solver/max_flow.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(MaxFlow, ClassicNetwork) {
  // 0 -> 1 (3), 0 -> 2 (2), 1 -> 2 (1), 1 -> 3 (2), 2 -> 3 (3): max flow 5.
  MaxFlow flow;
  flow.Reset(4);
  int a01 = flow.AddArc(0, 1, 3);
  flow.AddArc(0, 2, 2);
  flow.AddArc(1, 2, 1);
  int a13 = flow.AddArc(1, 3, 2);
  flow.AddArc(2, 3, 3);
  EXPECT_DOUBLE_EQ(flow.Run(0, 3), 5);
  EXPECT_DOUBLE_EQ(flow.flow(a01), 3);
  EXPECT_DOUBLE_EQ(flow.flow(a13), 2);
  const auto& side = flow.SourceSide(0);
  EXPECT_EQ(side, (std::vector<uint8_t>{1, 0, 0, 0}));
  // Running again pushes nothing more.
  EXPECT_DOUBLE_EQ(flow.Run(0, 3), 0);
}

TEST(MaxFlow, DisabledArcCarriesNothingAndUnboundedPathIsReported) {
  MaxFlow flow;
  flow.Reset(3);
  int a = flow.AddArc(0, 1, 1);
  flow.AddArc(1, 2, MaxFlow::kInfinity);
  flow.DisableArc(a);
  EXPECT_DOUBLE_EQ(flow.Run(0, 2), 0);
  MaxFlow unbounded;
  unbounded.Reset(2);
  unbounded.AddArc(0, 1, MaxFlow::kInfinity);
  EXPECT_GE(unbounded.Run(0, 1), MaxFlow::kInfinity / 2);
}

// Augment once recursed once per level of the level graph: a path of 1,000,000 nodes
// (far more levels than an 8 MB call stack holds) died with SIGSEGV.
TEST(MaxFlow, PathOfAMillionNodes) {
  constexpr int kNodes = 1'000'000;
  const int bottleneck = kNodes / 3;
  MaxFlow flow;
  flow.Reset(kNodes);
  for (int v = 0; v + 1 < kNodes; ++v) flow.AddArc(v, v + 1, v == bottleneck ? 2.0 : 7.0);
  EXPECT_DOUBLE_EQ(flow.Run(0, kNodes - 1), 2);
  const auto& side = flow.SourceSide(0);
  int wrong = 0;
  for (int v = 0; v < kNodes; ++v) wrong += (side[static_cast<size_t>(v)] != 0) != (v <= bottleneck) ? 1 : 0;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace wattcut
