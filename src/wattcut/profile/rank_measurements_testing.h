// Test support: distinct, easily recomputed per-rank measurements, for the tests of the per-rank
// (Merak/Zeus) profile layout and of its aggregation: each rank of data-parallel index `dp`,
// pipeline stage `stage` and tensor-parallel index `tp` has its own time and energy at `freq`.
#pragma once

#include "wattcut/profile/instruction.h"

namespace wattcut::testing {

inline double RankTime(int dp, int stage, int tp, InstructionKind kind, int freq) {
  return 0.05 + 0.01 * stage + (kind == InstructionKind::kBackward ? 0.05 : 0) + 0.003 * ((dp + 2 * tp) % 3) +
         (1410 - freq) * 1e-4;
}
inline double RankEnergy(int dp, int stage, int tp, InstructionKind kind, int freq) {
  return 10.0 + stage + (kind == InstructionKind::kBackward ? 20 : 0) + 1.5 * tp + 0.25 * dp + (1410 - freq) * 0.01;
}

}  // namespace wattcut::testing
