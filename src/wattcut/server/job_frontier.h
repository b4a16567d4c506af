// A job's frontier computations as the FrontierWorker runs them: each start counted in the stored
// state before the work (so a computation the server dies in is known at the next start: the
// crash-loop breaker, job_restore.h), each end counted back to 0 and its result installed and
// stored; and the frontier's answers (GET /v1/jobs/{id}/frontier and its points).
#pragma once

#include <string>

#include "wattcut/plan/frontier.h"
#include "wattcut/server/frontier_worker.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// Consecutive interrupted frontier computations after which a job is not recomputed at
// start-up.
inline constexpr int kMaxInterruptedFrontierAttempts = 2;

// The worker starts `task`: false when the job moved on (deleted, a newer generation).
bool FrontierStarted(Job& job, const FrontierTask& task) REQUIRES(job.mu());

// What the worker's `frontier` gives the job (FrontierResult), built without the job's lock.
FrontierResult FrontierResultOf(Result<Frontier> frontier, double seconds);

// The worker finished `task` with `result`: stores it (a store that fails leaves a frontier
// served, computed again after a restart) and redeploys.
void FrontierDone(Job& job, JobContext& ctx, const FrontierTask& task, FrontierResult result) REQUIRES(job.mu());

Answer FrontierStatus(Job& job) REQUIRES(job.mu());
Answer FrontierPoints(Job& job, int64_t offset, int64_t limit) REQUIRES(job.mu());

}  // namespace wattcut::server
