// Barrier-free plan delivery for one job (deployment.h): a new deployment version when what the
// ranks should run has changed, and a rank's poll answered.
#pragma once

#include <cstdint>

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// A new deployment version (stored as bookkeeping: if the write fails the ranks still get the
// new version; they compare versions for equality, so a lower stored one after a restart is
// also a change) when the decision of the moment differs from the deployed target. A frontier
// being computed leaves the ranks on the plan they have.
void Redeploy(Job& job, JobContext& ctx) REQUIRES(job.mu());

// GET /v1/jobs/{id}/deployment's answer for `rank` (registered): the deployment when its
// version is not `version`, else just the version and the poll interval.
Answer DeploymentAnswer(Job& job, JobContext& ctx, const RankInfo& rank, uint64_t version) REQUIRES(job.mu());

}  // namespace wattcut::server
