// A stored job read back at start-up: its rows and state decoded, its profile parsed again, its
// stored frontier used when it reads back and no computation was interrupted since, and the
// crash-loop breaker: a job whose last kMaxInterruptedFrontierAttempts computations were all
// interrupted (the server died while computing them) is marked failed, saying how to retry,
// instead of being computed again.
#pragma once

#include <memory>

#include "wattcut/base/result.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_store.h"

namespace wattcut::server {

struct RestoredJob {
  std::shared_ptr<Job> job;
  bool compute_frontier = false;  // its frontier is to be computed (again)
};

// An error when the job's rows cannot be decoded (the registry quarantines it). The deployment
// target is decided again at `now_unix_s` (the ranks keep what they were given; no new version);
// a deadline schedule is computed again after the load, in the background, and the target decided
// again with it (job_deadline.h: StartDeadlineAfterRestore).
Result<RestoredJob> RestoreJob(JobStore& store, const StoredJob& stored, double now_unix_s);

}  // namespace wattcut::server
