// A job's profile: uploaded as a CSV, aggregated from its ranks' profiles, or measured by the
// server's sweep; installed (stored, checked against every registered rank) and its frontier
// computation started. The planner settings the frontier is computed with.
#pragma once

#include <string>

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// PUT /v1/jobs/{id}/planner, PUT /v1/jobs/{id}/profile, POST /v1/jobs/{id}/rank_profiles,
// POST /v1/jobs/{id}/frontier.
Answer SetPlanner(Job& job, JobContext& ctx, const PlannerSettings& planner) REQUIRES(job.mu());
// The job's settings with the patch's fields changed (PUT .../planner).
Answer SetPlanner(Job& job, JobContext& ctx, const PlannerPatch& patch) REQUIRES(job.mu());
Answer UploadProfile(Job& job, JobContext& ctx, const ProfileUpload& upload) REQUIRES(job.mu());
Answer UploadRankProfile(Job& job, JobContext& ctx, const RankProfile& profile) REQUIRES(job.mu());
Answer ComputeFrontierNow(Job& job, JobContext& ctx) REQUIRES(job.mu());

// Aggregates the received rank profiles and installs the result as `source`'s.
Status InstallRankProfiles(Job& job, JobContext& ctx, const std::string& source) REQUIRES(job.mu());

// Starts computing the job's frontier (a new generation; the worker's result for an older one
// is dropped); without num_microbatches it fails at once, saying how to set it.
void SubmitFrontier(Job& job, JobContext& ctx) REQUIRES(job.mu());

}  // namespace wattcut::server
