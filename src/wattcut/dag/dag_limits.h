// The size of a computation DAG the planner accepts: what a DAG file (dag_file.h) and the planner's
// bounds (plan/planning_limits.h, which takes these from here) both bound, decided once, below both.
#pragma once

#include <cstdint>

namespace wattcut {

// Computations per iteration: stages x microbatches x 2 (a forward and a backward).
// 2^20 = 128 stages x 4096 microbatches. At the bound (A100 model, unit time 0.048 s, 128
// points): the problem built in 0.8 s, the solver's first state in 1.8 s, 0.26 s a step,
// the whole frontier in 30 s, 546 MB at peak. (2^21: 1.0 GB, 0.89 s a step.)
inline constexpr int64_t kMaxComputations = int64_t{1} << 20;

// Entries of the cost tables: the sum over (stage, instruction) of the integer durations
// tabulated, max - min quantised duration + 1 (8 bytes each): 2^24 = 128 MiB. The
// measured profiles need ~1,000 at the default unit time of 1 ms; a table this large
// only comes from a unit time far finer than the measurements (profile times x 1e9 once
// used 16.8 GB here).
inline constexpr int64_t kMaxDurationTableEntries = int64_t{1} << 24;

}  // namespace wattcut
