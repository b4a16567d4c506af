// A job's schedule rounds (the Zeus protocol, round_barrier.h): every rank asks GET /schedule and
// waits (a long poll) until all world_size ranks have asked; then all are answered with that
// round's schedule. The profiling sweep's results (POST /result) and the preview of the next
// round (GET /v1/jobs/{id}/schedule).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"

namespace wattcut::server {

// What a rank that must wait for its round is answered through: `park` is given the wait (for
// ending it early: EndRoundWait) and returns the reply (round_barrier.h), or an empty one when
// this caller cannot wait (the rank is then refused kUnavailable).
using ParkRank = std::function<RoundReply(const RoundWait& wait)>;

// GET /schedule/{id}?rank=R. The answer now (the last rank to ask gets the round's schedule, and
// every waiting rank is answered with its own; an error), or nullopt: the rank waits, and the
// reply `park` gave is called once, with the job's mutex held: the round's schedule, or
// kDeadlineExceeded (naming ranks that never asked) after the long-poll timeout, kAborted when
// the job is deleted, kUnavailable when the server stops. kUnavailable at once when
// --max-long-polls ranks wait already.
std::optional<Answer> FetchSchedule(Job& job, JobContext& ctx, int64_t rank, const ParkRank& park) REQUIRES(job.mu());
// `wait` ends before its round: its deadline passed (answered kDeadlineExceeded), or its client
// went away (`timed_out` false: not answered). Nothing when that wait has ended already.
void EndRoundWait(Job& job, JobContext& ctx, const RoundWait& wait, bool timed_out) REQUIRES(job.mu());
// Every waiting rank of the job is answered `error` (the job deleted, the server stopping).
void AnswerEveryWaiter(Job& job, JobContext& ctx, const Error& error) REQUIRES(job.mu());
// GET /v1/jobs/{id}/schedule?rank=R: what the next round would serve now; starts nothing.
Answer PreviewSchedule(Job& job, JobContext& ctx, int64_t rank) REQUIRES(job.mu());
// POST /result/{id}: stored; a sweep step's measurement is recorded (and the profile built when
// the sweep is done).
Answer PostResult(Job& job, JobContext& ctx, const ProfilingResult& result) REQUIRES(job.mu());

}  // namespace wattcut::server
