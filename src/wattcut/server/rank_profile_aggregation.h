// Per-rank profiles (Zeus OfflineProfilingResult, uploaded or measured by the server's
// profiling sweep) into the job's one pipeline profile, with profile/rank_aggregation.h's
// rule, the CSV reader's: per (pp, dp) replica the max time and the summed energy over its
// tp ranks, then the mean over dp replicas, keeping for each (stage, instruction) the
// frequencies every rank of the stage measured (time and energy); each frequency left out
// is returned as a DroppedFrequency. Each stage's plan then goes to all of its replicas.
#pragma once

#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

// Fails when a pp_rank is outside 0..pp_degree-1 or a stage has no measurements.
Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree);

}  // namespace wattcut::server
