// A job's deadline schedule (PUT / DELETE / GET /v1/jobs/{id}/deadline_schedule,
// deadline_following.h): set on the ready frontier, followed at each deployment poll (computed
// again on a new frontier, replanned when the job is off it), cleared.
#pragma once

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

Answer SetDeadlineSchedule(Job& job, JobContext& ctx, const DeadlineScheduleSpec& spec) REQUIRES(job.mu());
Answer ClearDeadlineSchedule(Job& job, JobContext& ctx) REQUIRES(job.mu());
// A read changes nothing: a schedule not computed yet since a restart is computed for the answer.
Answer GetDeadlineSchedule(Job& job, JobContext& ctx) REQUIRES(job.mu());

// Computes the schedule on the job's ready frontier where it was computed on another one (a
// restart, a new frontier): in memory, from the stored spec.
void ComputeDeadlineOnNewFrontier(Job& job, double now_unix_s) REQUIRES(job.mu());
// At a deployment poll: the schedule computed on a new frontier, replanned (stored) where the job
// is off it, and a new deployment when the point of the moment changed.
void FollowDeadline(Job& job, JobContext& ctx) REQUIRES(job.mu());

}  // namespace wattcut::server
