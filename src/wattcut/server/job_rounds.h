// A job's schedule rounds (the Zeus protocol, round_barrier.h): every rank asks GET /schedule and
// waits (a long poll) until all world_size ranks have asked; then all are answered with that
// round's schedule. The profiling sweep's results (POST /result) and the preview of the next
// round (GET /v1/jobs/{id}/schedule).
#pragma once

#include <cstdint>

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// GET /schedule/{id}?rank=R: waits for the round, releasing the job's mutex while it waits; ends
// with kDeadlineExceeded (naming ranks that never asked) after the long-poll timeout,
// kAborted when the job is deleted, kUnavailable when the server stops or too many polls wait.
Answer FetchSchedule(Job& job, JobContext& ctx, int64_t rank) REQUIRES(job.mu());
// GET /v1/jobs/{id}/schedule?rank=R: what the next round would serve now; starts nothing.
Answer PreviewSchedule(Job& job, JobContext& ctx, int64_t rank) REQUIRES(job.mu());
// POST /result/{id}: stored; a sweep step's measurement is recorded (and the profile built when
// the sweep is done).
Answer PostResult(Job& job, JobContext& ctx, const ProfilingResult& result) REQUIRES(job.mu());

}  // namespace wattcut::server
