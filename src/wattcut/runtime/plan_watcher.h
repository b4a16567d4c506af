// The rank client's background thread (issue 12): everything the rank says to the planning
// server after start-up happens here, never on the training thread.
//
// Each round (RunOnce) it
//   1. registers the job (rank 0, when the server was down at start) and the rank, if not done;
//   2. sends the queued background requests (rank profile upload, straggler reports), oldest
//      first, each retried until the server acknowledges it;
//   3. polls GET /v1/jobs/{job}/deployment with the rank's step counter and the newest version it
//      holds, and keeps a changed deployment in a slot for the training thread;
// and then waits the server's poll interval (jittered by +-20 %), or, after a failure, a capped
// exponential backoff (0.5 s doubling to 30 s, jittered alike).
//
// The training thread only touches atomics: SetStepsCompleted() after each step, and TakeDue()
// at a step boundary, which looks at an atomic flag and locks the slot's mutex only when a
// deployment is waiting (the watcher holds that mutex only to swap a deployment in).
//
// Outages: when the server cannot be reached (connection refused or timed out, 503, 504) the
// watcher logs ONE warning, counts the outage and every missed poll, keeps the plan the rank has,
// and logs ONE line when the server answers again, saying how long it was away. A job the server
// no longer knows (404) is warned about once per episode and the rank keeps its plan; a poll
// answered 409 (the rank is not registered, e.g. a server that lost its state) re-registers the
// rank. Queued requests are final on any other 4xx answer (logged once and dropped).
//
// The server calls, the clock, the random source and the log sink are injectable: the unit tests
// drive RunOnce() by hand on a fake server and a fake clock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/runtime/deployment.h"

namespace wattcut {

// What the watcher asks the server (each called on the watcher's thread only, or by Start()
// before the thread runs). The job id is the watcher's (see PlanWatcher::job_id()).
struct PlanWatcherServer {
  // POST /register_job: the new job's id. Empty: this rank does not register the job.
  std::function<Result<std::string>()> register_job;
  // POST /register_rank/{job}.
  std::function<Status(const std::string& job_id)> register_rank;
  // GET /v1/jobs/{job}/deployment?rank=..&step=steps_completed&version=version.
  std::function<Result<DeploymentAnswer>(const std::string& job_id, uint64_t steps_completed, uint64_t version)>
      fetch_deployment;
};

struct PlanWatcherOptions {
  int rank = 0;                        // for the log lines
  std::string server_url = {};         // for the log lines
  double first_poll_interval_s = 0.5;  // until the server names its own
  double min_backoff_s = 0.5;          // the first wait after a failure, doubled per failure...
  double max_backoff_s = 30;           // ...up to this
  double jitter_fraction = 0.2;        // every wait is scaled by a uniform factor in 1 +- this
  // Monotonic seconds (default: the steady clock); for "back after N s".
  std::function<double()> now_s = {};
  // Uniform in [0, 1) (default: a generator seeded from the rank and the clock).
  std::function<double()> random_unit = {};
  // One line without a newline (default: "wattcut: LINE\n" on stderr). Called from the watcher's
  // thread and from the training thread (late deployments).
  std::function<void(const std::string&)> log = {};
};

// A request queued for the background: `send` is called with the job id until it returns Ok.
struct BackgroundRequest {
  std::string what;  // "rank profile upload", "straggler report (dp_rank 1: slowdown 1.5)"
  std::function<Status(const std::string& job_id)> send;
};

// How a failure is handled (from its code; see base/error_code.h and the HTTP client's mapping).
enum class FailureKind {
  kUnreachable,  // no answer, 503 or 504: an outage; retry
  kJobMissing,   // 404: the job is unknown (deleted, or being re-registered); retry
  kConflict,     // 409: not possible in the job's state (e.g. the rank is not registered); retry
  kRefused,      // any other answer (400, 401, 410, 422, a malformed reply): final for a request
};
FailureKind FailureKindOf(const Error& error);

class PlanWatcher {
 public:
  // `job_id` empty: the job is registered by server.register_job, or its id comes with SetJobId.
  // `rank_registered`: false when the rank still has to register (the watcher does it).
  PlanWatcher(PlanWatcherOptions options, PlanWatcherServer server, std::string job_id, bool rank_registered);
  ~PlanWatcher();
  PlanWatcher(const PlanWatcher&) = delete;
  PlanWatcher& operator=(const PlanWatcher&) = delete;

  // Registers the job (when the watcher registers it) and the rank now, on the calling thread
  // (Start-up does this before the thread runs). Ok when both are done; an unreachable server
  // starts an outage (one warning) and is returned like any other failure: the caller decides
  // whether to go on (the watcher's rounds keep trying) or to fail.
  Status RegisterNow();
  // After a failed RegisterNow: the backoff to wait before the thread's first round.
  double retry_delay_s() const { return next_delay_s_; }

  // One round (see the top of this file), on the calling thread; returns the seconds to wait
  // before the next one. The thread calls it; tests call it directly without Start().
  double RunOnce();
  // Runs rounds on a thread, the first after `first_delay_s`. Once.
  void Start(double first_delay_s);
  // Stops the thread (interrupting a wait; a request under way ends within its own timeout) and
  // logs how many queued requests were never acknowledged. Idempotent.
  void Stop();

  // ---- the training thread ----
  // The steps this rank has completed (the server picks apply steps from them). Relaxed store.
  void SetStepsCompleted(uint64_t steps) { steps_completed_.store(steps, std::memory_order_relaxed); }
  // True when a deployment is waiting (an atomic load; no lock).
  bool has_pending() const { return has_pending_.load(std::memory_order_acquire); }
  // At the boundary before step `step` (0-based): the newest waiting deployment whose
  // apply_from_step <= step (older ones it supersedes are dropped), or nothing. When it applies
  // later than max(apply_from_step, ready_from_step) it logs ONE warning: "plan version N was due
  // at step A; applied at step S (K steps late)". `ready_from_step`: the first step at which the
  // rank could run a plan at all (after its profiling), so a change due during profiling is not
  // called late.
  std::optional<RankDeployment> TakeDue(uint64_t step, uint64_t ready_from_step = 0);

  // Queues a request for the background (any thread) and wakes the watcher unless it is in an
  // outage's backoff.
  void Enqueue(BackgroundRequest request);
  // The job's id, once known (any thread). Sets it when it was not known yet and wakes the
  // watcher; a different id afterwards is ignored (false).
  bool SetJobId(const std::string& job_id);
  std::string job_id() const;

  // ---- state (any thread) ----
  bool connected() const { return connected_.load(std::memory_order_relaxed); }
  uint64_t missed_updates() const { return missed_updates_.load(std::memory_order_relaxed); }
  uint64_t outages() const { return outages_.load(std::memory_order_relaxed); }
  // The newest deployment version received (waiting or applied); 0: none yet.
  uint64_t received_version() const { return received_version_.load(std::memory_order_relaxed); }
  // The version TakeDue last handed out; 0: none yet.
  uint64_t applied_version() const { return applied_version_.load(std::memory_order_relaxed); }
  size_t queued_requests() const;
  bool rank_registered() const { return rank_registered_.load(std::memory_order_relaxed); }
  // One line to the log sink (PlanWatcherOptions::log), prefixed with "rank N: " (any thread).
  void Log(const std::string& line) const;

 private:
  struct QueuedRequest {
    BackgroundRequest request;
    bool warned = false;  // a retryable failure of it was logged
  };

  // The watcher's own steps; each returns false when the round must end (its failure handled).
  bool EnsureRegistered(bool at_start);
  bool RegistrationFailed(const std::string& what, const Error& error, bool at_start);
  bool DeliverQueued();
  // A failed step: counts and logs by kind, and returns the backoff to wait.
  double Failed(const std::string& what, const Error& error);
  // The server answered (whatever it said): ends an outage with its one line.
  void Reached();
  void Hold(RankDeployment deployment);
  double Jittered(double seconds);
  double NowS() const;

  PlanWatcherOptions options_;
  PlanWatcherServer server_;

  // Watcher-thread state (RegisterNow before Start, then only the thread).
  double poll_interval_s_;
  double backoff_s_ = 0;  // 0: no failure since the last success
  std::optional<double> outage_since_s_;
  uint64_t outage_missed_ = 0;
  bool job_missing_warned_ = false;
  std::string refused_warned_;  // the last refused poll's message, logged once
  uint64_t held_version_ = 0;
  Error last_error_;         // of the step that ended the round
  double next_delay_s_ = 0;  // the wait after a round a step ended

  std::atomic<uint64_t> steps_completed_{0};
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> missed_updates_{0};
  std::atomic<uint64_t> outages_{0};
  std::atomic<uint64_t> received_version_{0};
  std::atomic<uint64_t> applied_version_{0};
  std::atomic<bool> rank_registered_{false};
  std::atomic<bool> in_outage_{false};

  std::atomic<bool> has_pending_{false};
  std::mutex pending_mutex_;
  std::vector<RankDeployment> pending_;  // ascending versions

  mutable std::mutex state_mutex_;  // job_id_, queue_, wake_, stop_
  std::string job_id_;
  std::deque<QueuedRequest> queue_;
  bool wake_ = false;
  bool stop_ = false;
  std::condition_variable wake_cv_;
  std::thread thread_;
};

}  // namespace wattcut
