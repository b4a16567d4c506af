// The bounds on what the planner accepts, decided here and checked before any work
// starts. Every caller (the planner, the CLI, the server's HTTP fields) takes its bounds
// from this file, so a limit is written once.
//
// Each bound is sized to cover every real training job (Megatron-LM runs use up to ~128
// pipeline stages and up to a few thousand microbatches per iteration) while keeping the
// planner's memory bounded. The comment of each states its reason and what planning
// costs at the bound.
#pragma once

#include <cstdint>

#include "wattcut/base/result.h"

namespace wattcut {

// Pipeline stages (PlannerOptions' profile stages, the server's pp_degree).
// Provisional value; see the .cc for the measurements.
inline constexpr int kMaxStages = 1024;

// Microbatches per iteration (PlannerOptions::num_microbatches).
inline constexpr int kMaxMicrobatches = 16384;

// Computations of one iteration: stages x microbatches x 2 (a forward and a backward).
inline constexpr int64_t kMaxComputations = 2'000'000;

// Entries of the cost tables: the sum over (stage, instruction) of the number of integer
// durations tabulated (max - min quantised duration + 1).
inline constexpr int64_t kMaxDurationTableEntries = 50'000'000;

// "pipeline stages must be in [1, kMaxStages], got N", and the same for microbatches and
// their product.
Status CheckPipelineShape(int num_stages, int num_microbatches);

// Refuses a duration table with more than kMaxDurationTableEntries entries; says the
// size, the limit and what to do (a coarser unit time).
Status CheckDurationTableEntries(int64_t entries, double unit_time_s);

}  // namespace wattcut
