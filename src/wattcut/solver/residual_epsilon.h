// The one tolerance of the flow solvers (MaxFlow, PushRelabel, DynamicMinCut): a residual
// capacity at or below it counts as zero. One value for all three, so that the solvers the
// frontier solver switches between (and the tests compare) agree on which arcs are saturated.
#pragma once

namespace wattcut {

inline constexpr double kResidualEpsilon = 1e-10;

}  // namespace wattcut
