// The checks a job's changes pass before they are stored (Job::Check), each written once: a
// rank that names itself, a new rank, a rank's profile, and the planner's bounds on a pipeline.
// Every message names the job (or the field) and what was expected.
#pragma once

#include <optional>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/server/http_api.h"

namespace wattcut::server {

// The registered rank `rank` of the job of `info`: kInvalidArgument "job 'ID': rank R is out
// of range [0, N)", kConflict "job 'ID': rank R has not registered; POST /register_rank/ID
// first".
Result<const RankInfo*> RegisteredRank(const JobInfo& info, const std::vector<std::optional<RankInfo>>& ranks,
                                       int64_t rank);

// A rank registering: its rank, dp, pp and tp ranks within the job's degrees
// (kInvalidArgument), not registered before and not sharing its (dp, pp, tp) with another rank
// (kConflict). Messages without the job's prefix.
Status CheckNewRank(const JobInfo& info, const std::vector<std::optional<RankInfo>>& ranks, const RankInfo& rank);

// A pipeline's data-parallel rank (a straggler's): kInvalidArgument "dp_rank D is out of range
// [0, N)".
Status CheckDpRank(const JobInfo& info, int64_t dp_rank);

// A rank's uploaded profile against what it registered with: the same dp, pp and tp ranks,
// only frequencies it declared.
Status CheckRankProfile(const RankInfo& registered, const RankProfile& profile);

// The planner's bounds on a job's pipeline (pp_degree stages x num_microbatches) and the
// schedule's own requirements, checked when the settings arrive, before any work.
Status CheckPipelineLimits(const JobInfo& info, const PlannerSettings& planner);

}  // namespace wattcut::server
