// Per-rank profiles (Zeus OfflineProfilingResult, uploaded or measured by the server's
// profiling sweep) into the job's one pipeline profile, with profile/rank_aggregation.h's
// rule, the CSV reader's: per (pp, dp) replica the max time and the summed energy over its
// tp ranks, then the mean over dp replicas, keeping for each (stage, instruction) the
// frequencies every rank of the stage measured (time and energy); each frequency left out
// is returned as a DroppedFrequency. Each stage's plan then goes to all of its replicas.
//
// A zero-bubble rank's measured split backward (backward_input B and backward_weight W)
// becomes the stage's kBackwardInput and kBackwardWeight measurements, aggregated by the
// same rule, so the planner plans the measured B:W ratio instead of halves of the
// backward (profile/backward_split.h). The stage's kBackward is what the ranks sent as
// their whole backward and, at each frequency where a rank sent only the split, B + W: a
// schedule without the split (1F1B, GPipe, interleaved) plans the same job too. A rank
// that sends both the whole backward and the split at one frequency keeps both: the split
// is what zero-bubble schedules plan, the whole backward what the others plan. The split
// needs every rank of a stage: a stage where some ranks sent it and others did not has
// each of its split frequencies left out, and then no split frequency left, which is an
// error naming the stage and the first rank that lacks it.
#pragma once

#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

// Fails when a pp_rank is outside 0..pp_degree-1 or a stage has no measurements.
Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree);

}  // namespace wattcut::server
