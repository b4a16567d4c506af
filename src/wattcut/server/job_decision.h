// What a job serves now (schedule_decision.h's DecideSchedule over the job's state), with a
// power target's and a deadline schedule's caps applied. Shared by the rounds, the deployments
// and the previews.
#pragma once

#include "wattcut/server/job.h"

namespace wattcut::server {

// The decision at `now_unix_s`. Builds the job's instruction order when it is needed (a cache);
// changes nothing stored: a sweep the decision starts is in start_sweep_freqs_mhz, for the
// round that completes to store.
ScheduleDecision Decide(Job& job, double now_unix_s, bool may_start_profiling) REQUIRES(job.mu());

}  // namespace wattcut::server
