// The bounds on what the planner accepts, decided here and checked before the work they
// bound starts. Every caller (the planner, the CLI, the server's HTTP fields) takes its
// bounds from this file, so each limit is written once.
//
// The bounds cover every real training job (Megatron-LM runs use up to ~128 pipeline
// stages and up to a few thousand microbatches per iteration; a long iteration may need
// a coarser unit time than the default 1 ms) and keep planning within about 600 MB of
// memory and minutes of time. Planning grows with the computations per iteration C
// (stages x microbatches x 2) and with the frontier's points P (one per unit time between
// the slowest and the fastest iteration): each point sweeps the DAG, and every 256th
// keeps a plan checkpoint of 8 bytes per computation. Measured on the 2-core development
// machine (shared with other builds, so times vary 2x), -O2, /usr/bin/time around
// ComputeFrontier:
//   * a solver step costs 16-32 ns per computation on the GPT-3 profile (its critical DAG
//     is narrow) and 110-430 ns on the built-in A100 model, whose stages are all alike
//     (most of the DAG stays critical; the worst case found);
//   * the DAG, the solver's network and the problem take ~500 bytes per computation.
#pragma once

#include <cstdint>

#include "wattcut/base/result.h"
#include "wattcut/dag/dag_limits.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {

// Pipeline stages. 8x the deepest pipelines in use (~128); a stage by itself costs the
// planner little (kMaxComputations bounds the work).
inline constexpr int kMaxStages = 1024;

// Microbatches per iteration. 4x the "few thousand" of the largest jobs;
// kMaxComputations bounds the work.
inline constexpr int kMaxMicrobatches = 16384;

// Computations per iteration (kMaxComputations) and cost table entries
// (kMaxDurationTableEntries): dag/dag_limits.h, which a DAG file bounds too.

// Frontier points P, an upper bound known before solving: the slowest iteration minus the
// fastest, in unit times, plus one. Each point keeps ~100 bytes, its plan changes
// included. Measured: GPT-3, 8 stages x 12 microbatches at a unit time of 1 us, 637,768
// points in 43 s and 91 MB; the bound: ~70 s and ~140 MB.
inline constexpr int64_t kMaxFrontierPoints = 1'000'000;

// P x C: the solver's time (each point sweeps the DAG) and the plan checkpoints
// (P x C / 32 bytes: 31 MB at the bound). Measured: GPT-3 8 x 1000 at 1 ms, 34,232
// points x 16,000 = 5.5e8, in 8.7-17 s and 35 MB (8 x 2000, 2.2e9: 60-120 s); A100
// model 32 x 256 at 1 ms, 13,397 x 16,384 = 2.2e8, in 24 s and 25 MB. At the bound:
// 16-32 s on the GPT-3 profile, 2-7 min in the worst case above.
inline constexpr double kMaxFrontierWork = 1e9;

// The slowest iteration, in unit times: 2^53, so that every makespan, and every time
// computed from one, is exact in a double (and no sum of durations overflows).
inline constexpr int64_t kMaxIterationUnits = kMaxDurationUnits;  // profile/operation_options.h

// The planner adds, subtracts and multiplies energies of a whole iteration: their
// magnitudes summed over every computation must stay far from the double range.
inline constexpr double kMaxIterationEnergyJ = 1e200;

// "pipeline stages must be in [1, 1024], got 100000".
Status CheckStages(int num_stages);
// "microbatches must be in [1, 16384], got 30000".
Status CheckMicrobatches(int num_microbatches);
// Both, and their computations (instructions x stages x microbatches: 2 instructions, forward
// and backward, or 3 for a schedule that splits the backward) against kMaxComputations.
Status CheckPipelineShape(int num_stages, int num_microbatches, int instructions = 2);

// Refuses cost tables with more than kMaxDurationTableEntries entries in all; says the
// size, the limit and a unit time that would fit.
Status CheckDurationTableEntries(int64_t entries, double unit_time_s);

// The frontier of an iteration whose slowest and fastest lengths are `slowest_units` and
// `fastest_units` (longest paths at the longest and at the shortest durations) over
// `computations` computations: refuses more than kMaxIterationUnits, kMaxFrontierPoints
// or kMaxFrontierWork, with a unit time that would fit (or, when that is longer than
// `shortest_time_s`, the fastest measured computation, fewer microbatches).
Status CheckFrontierSize(double slowest_units, double fastest_units, int64_t computations, double unit_time_s,
                         double shortest_time_s);

// `energy_bound_j`: the sum over the computations of their largest effective energy
// magnitude, plus the blocking energy of the slowest iteration.
Status CheckIterationEnergy(double energy_bound_j);

}  // namespace wattcut
