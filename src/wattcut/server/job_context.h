// What the parts of the server that act on one job (job_rounds.h, job_deployments.h,
// job_profiles.h, ...) use besides the job: the metrics, the wall clock, the frontier and deadline
// workers and the server's limits. The registry owns them and hands this to each call, its job locked.
#pragma once

#include <atomic>
#include <chrono>

#include "wattcut/base/clock.h"
#include "wattcut/server/deadline_worker.h"
#include "wattcut/server/frontier_worker.h"
#include "wattcut/server/long_poll_timer.h"
#include "wattcut/server/metrics.h"

namespace wattcut::server {

// The JSON text of a successful answer, or what went wrong.
using Answer = Result<std::string>;

struct JobContext {
  Metrics& metrics;
  // Unix seconds: leases and deadline schedules must mean the same after a restart.
  const Clock& wall_clock;
  FrontierWorker& worker;
  DeadlineWorker& deadline_worker;
  const std::atomic<bool>& shutting_down;
  std::chrono::milliseconds long_poll_timeout;
  int max_long_polls;
  // The waiting ranks' deadlines (job_rounds.h).
  LongPollTimer& long_poll_timer;
};

}  // namespace wattcut::server
