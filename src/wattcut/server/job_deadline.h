// A job's deadline schedule (PUT / DELETE / GET /v1/jobs/{id}/deadline_schedule,
// deadline_following.h): set on the ready frontier, followed at each deployment poll (computed
// again on a new frontier, replanned when the job is off it), cleared.
//
// A schedule is computed off the job's lock, so that a rank's deployment poll never waits for
// one (a year of 5-minute prices takes seconds):
//  * PUT: BeginSetDeadline takes what the computation needs under the lock, the registry computes
//    it on the request's thread without the lock, and FinishSetDeadline stores it under the lock
//    again. A newer PUT, a DELETE of the schedule or of the job, or the server stopping cancels
//    it (the scheduler asks as it runs); a PUT whose computation was superseded answers kConflict
//    and changes nothing; one cancelled by the server stopping, kUnavailable.
//  * A schedule computed again (after a restart, on a new frontier) or replanned is computed on the
//    registry's DeadlineWorker: the poll that finds it due submits it and answers at once, and
//    ApplyDeadlineDone stores it when it ends. Meanwhile a replanned job follows the schedule it
//    had, and one computed again keeps the deployment it had (Redeploy waits for it). After a
//    restart the server listens at once and computes stored schedules in the background.
#pragma once

#include "wattcut/server/deadline_worker.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// What a PUT's computation needs, taken under the job's lock.
struct DeadlineComputation {
  uint64_t ticket = 0;
  DeadlineFollowing following;
  std::shared_ptr<const Frontier> frontier;
  JobInfo info;
  double now_s = 0;
  std::shared_ptr<std::atomic<bool>> cancel;
};

// PUT, its first half: checks the job (kConflict without a ready frontier), and begins a
// computation (cancelling the one in flight, if any).
Result<DeadlineComputation> BeginSetDeadline(Job& job, JobContext& ctx, const DeadlineScheduleSpec& spec)
    REQUIRES(job.mu());
// PUT, its second half, with what ComputeDeadline returned for `computation`: stores it and answers
// as GET does.
Answer FinishSetDeadline(Job& job, JobContext& ctx, DeadlineComputation computation, const Status& computed)
    REQUIRES(job.mu());
Answer ClearDeadlineSchedule(Job& job, JobContext& ctx) REQUIRES(job.mu());
// A read: the schedule as it stands, "computing" while a computation of it is in flight (one is
// started for a schedule computed on an older frontier).
Answer GetDeadlineSchedule(Job& job, JobContext& ctx) REQUIRES(job.mu());

// Submits the schedule's computation on the job's ready frontier where it was computed on another
// one and none is in flight; the deployment waits for it.
void StartDeadlineOnNewFrontier(Job& job, JobContext& ctx) REQUIRES(job.mu());
// The same for a job just read back from the store: until it is back, what the stored deployment
// version holds is not known (deadline_computations.h), and is decided again with it.
void StartDeadlineAfterRestore(Job& job, JobContext& ctx) REQUIRES(job.mu());
// At a deployment poll: the schedule computed on a new frontier or replanned where the job is off
// it (both submitted, not waited for), and a new deployment when the point of the moment changed.
void FollowDeadline(Job& job, JobContext& ctx) REQUIRES(job.mu());
// A DeadlineWorker task ended: its result stored if it is still the job's newest, then redeployed.
void ApplyDeadlineDone(Job& job, JobContext& ctx, DeadlineTask task, const Status& computed) REQUIRES(job.mu());

}  // namespace wattcut::server
