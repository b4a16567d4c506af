// The training step path of a RankClient, benchmarked the same way on every backend (gpu_bench.cc:
// simulated GPUs; agent_bench.cc: through the node agent): a scripted server that answers each
// poll with a new deployment due at the rank's current step (when asked to), alternating between
// two plans of 24 instructions, and a loop that times one whole step per iteration.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

#include "wattcut/runtime/rank_client.h"

namespace wattcut::bench {

// Plan `version`: 12 forwards and 12 backwards, their clocks alternating with the version's parity.
std::vector<ScheduleEntry> AlternatingPlan(uint64_t version);

// Sets `options` up for a rank without a server: no profiling, no watcher thread (the loop runs
// its round), registration accepted, deployments of AlternatingPlan scripted as above.
void ScriptDeployments(RankClientOptions& options, bool change_every_step);

// Times OnStepBegin, every instruction's begin and end, and OnStepEnd of one step per iteration
// (the watcher's round before it, untimed). Returns the seconds timed; skips with an error when a
// step fails.
double RunTimedSteps(benchmark::State& state, RankClient& client);

}  // namespace wattcut::bench
