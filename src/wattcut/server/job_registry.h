// The server's jobs in memory: the job map, loading it from the JobStore, registration and
// deletion, and the locking entry points of every endpoint. What each endpoint does to its job
// lives with the part of a job it concerns (job.h owns the job's state and applies every change:
// checked, stored, then applied):
//   job_rounds.h        the Zeus schedule rounds (a long-poll barrier) and profiling results
//   job_profiles.h      profiles and planner settings; frontier computations started
//   job_frontier.h      frontier computations ended (attempts, the crash-loop breaker's count)
//   job_restore.h       a stored job read back (and the breaker's decision)
//   job_selection.h     the selected plan and the stragglers
//   job_deployments.h   barrier-free plan delivery (deployment.h)
//   job_power_target.h  power targets, their leases and views
//   job_deadline.h      deadline schedules
//   job_measured_energy.h  the GPU energy the job's nodes measured, beside the planner's estimate
//   job_summaries.h     the listings and the status page's rows
//   job_id.h            the id format
//
// Round protocol (the Zeus one): every rank asks GET /schedule; the request waits (a long poll)
// until all world_size ranks of the job have asked, then all of them are answered at once with
// the schedule of that round. A waiting request gives up after the long-poll timeout
// (kDeadlineExceeded, naming the ranks that never asked), and ends with kAborted /
// kUnavailable when its job is deleted or the server stops; it never hangs.
//
// Start-up profiles (startup_profiles.h): a job registered whose pp_degree and planner settings
// match one gets its profile and frontier at once, stored with the job in the transaction that
// creates it (profile_source "startup:FILE_NAME").
//
// Frontiers are computed by the FrontierWorker and stored (plan/frontier_file.h format) when
// done: after a restart a job whose frontier was stored is ready at once. A stored job that
// cannot be read is quarantined: its rows stay in the store untouched, it is listed (GET
// /v1/jobs, /healthz), and the other jobs start.
//
// Reads never write: GET of a job, its power target, the status page and /metrics change
// nothing. A power target's lease lapses on the registry's own timer (every
// Options::lapse_check_interval_s of the clock) or at the job's next write (a round, a deployment
// poll), whichever comes first.
//
// Locks, in the order they are taken (never the other way):
//   1. JobRegistry::mu_   the job map and the quarantined jobs (shared for lookups)
//   2. Job::mu()          one job's state; at most one job's at a time
//   3. JobStore's own     taken inside each store call
// A job is found under 1, 1 is released, then 2 is taken; only Shutdown and the listings hold 1
// while taking 2. The compiler checks who holds what (base/thread_annotations.h).
//
// Every method returns the JSON text of its answer, or an Error whose code says what kind of
// failure it is; server.cc alone turns codes into HTTP statuses (http/http_status.h).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"
#include "wattcut/server/deadline_worker.h"
#include "wattcut/server/frontier_worker.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_context.h"
#include "wattcut/server/job_frontier.h"
#include "wattcut/server/job_rounds.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/metrics.h"
#include "wattcut/server/startup_profiles.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

// A stored job that could not be loaded, and why.
struct QuarantinedJob {
  std::string job_id;
  std::string error;
};

class JobRegistry {
 public:
  struct Options {
    std::chrono::milliseconds long_poll_timeout{std::chrono::minutes(10)};
    // Each waiting rank costs a descriptor and about 1.2 KB, no thread: the default holds a
    // 16,384-rank job.
    int max_long_polls = 16384;
    int frontier_threads = 1;
    PlannerSettings default_planner;
    // Profiles for new jobs, their frontiers computed (startup_profiles.h): a job registered
    // without a profile gets the one whose stage count is its pp_degree and whose planner
    // settings are the job's, with that frontier, at registration.
    StartupProfiles startup_profiles;
    // The wall clock (Unix seconds) for leases, deadline schedules and job ids; null: the
    // system's. A test passes a ManualClock and steps it past a lease.
    Clock* wall_clock = nullptr;
    // How often the lapse timer looks for power targets whose lease ran out.
    double lapse_check_interval_s = 1;
    // Called from every deadline schedule computation each time it asks whether it is cancelled
    // (every 256 intervals and at each bisection step), on the computing thread, without any
    // lock. Empty in the server; a test pauses a computation here to see that no rank waits for it.
    std::function<void()> deadline_checkpoint;
  };

  JobRegistry(JobStore& store, Metrics& metrics, Options options);
  ~JobRegistry();

  // Loads every stored job, its stored frontier included, and queues the frontiers to
  // compute. Fails only when the store cannot be read at all; a job that cannot be read is
  // quarantined.
  Status Load() EXCLUDES(mu_);
  std::vector<QuarantinedJob> quarantined_jobs() EXCLUDES(mu_);
  // Answers every long poll (kUnavailable), cancels every deadline computation, stops the lapse
  // timer, the long polls' timer and the frontier and deadline workers.
  void Shutdown() EXCLUDES(mu_);

  // Zeus endpoints.
  Answer RegisterJob(const JobRegistration& registration) EXCLUDES(mu_);
  Answer RegisterRank(const std::string& job_id, const RankInfo& info);
  // GET /schedule (job_rounds.h): the answer now, or nullopt when the rank waits for its round
  // and is answered later through the reply `park` gives (the server's holds the connection, no
  // thread). The deadline of a waiting rank is the long-poll timeout.
  std::optional<Answer> WaitForSchedule(const std::string& job_id, int64_t rank, const ParkRank& park);
  // The same, waiting on the calling thread (an in-process caller).
  Answer FetchSchedule(const std::string& job_id, int64_t rank);
  // A waiting rank's client went away: the rank stops waiting (it may ask again).
  void AbandonRoundWait(const RoundWait& wait);
  Answer PostResult(const std::string& job_id, const ProfilingResult& result);

  // wattcut endpoints.
  Answer ListJobs() EXCLUDES(mu_);
  Answer GetJob(const std::string& job_id);
  Answer DeleteJob(const std::string& job_id) EXCLUDES(mu_);
  Answer SetPlanner(const std::string& job_id, const PlannerSettings& planner);
  Answer SetPlanner(const std::string& job_id, const PlannerPatch& patch);
  Answer UploadProfile(const std::string& job_id, const ProfileUpload& upload);
  Answer UploadRankProfile(const std::string& job_id, const RankProfile& profile);
  Answer ComputeFrontierNow(const std::string& job_id);
  Answer FrontierStatus(const std::string& job_id);
  Answer FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit);
  Answer SelectPlan(const std::string& job_id, const PlanSelection& selection);
  Answer ReportStraggler(const std::string& job_id, const StragglerReport& report);
  Answer ListStragglers(const std::string& job_id);
  Answer PreviewSchedule(const std::string& job_id, int64_t rank);  // no waiting
  // PUT / DELETE / GET /v1/jobs/{id}/power_target (job_power_target.h). A target holds every
  // pipeline to the fastest plan at or below it (deployment.h: PointForPowerTarget,
  // CapDecision), through a new deployment version when that changes what a pipeline runs; no
  // plan that low: the lowest-power plan, and the answer says "met": false. A target set before
  // the frontier is ready is stored and applied when it is. Each answers the target as it stands.
  Answer SetPowerTarget(const std::string& job_id, const PowerTarget& target);
  Answer ClearPowerTarget(const std::string& job_id);
  Answer GetPowerTarget(const std::string& job_id);
  // PUT / DELETE / GET /v1/jobs/{id}/deadline_schedule (job_deadline.h). PUT needs the job's
  // frontier ready (kConflict otherwise), computes the schedule without holding the job's lock,
  // and answers as GET does; kConflict when a newer PUT or a DELETE came meanwhile.
  Answer SetDeadlineSchedule(const std::string& job_id, const DeadlineScheduleSpec& spec);
  Answer ClearDeadlineSchedule(const std::string& job_id);
  Answer GetDeadlineSchedule(const std::string& job_id);
  // PUT /v1/jobs/{id}/measured-energy/{node} (job_measured_energy.h): the GPU energy the job
  // used on `node`, stored (a later report of the node replaces it). kInvalidArgument for a
  // node that is not a host name (measured_gpu_energy.h: CheckNodeName).
  Answer ReportMeasuredGpuEnergy(const std::string& job_id, const std::string& node, const NodeGpuEnergy& report);
  // GET /v1/jobs/{id}/measured-energy?offset=&limit= (job_measured_energy.h): the reports, paged.
  Answer MeasuredGpuEnergyNodes(const std::string& job_id, int64_t offset, int64_t limit);
  // The jobs with a power target, for /metrics.
  std::vector<PowerTargetGauge> PowerTargetGauges() EXCLUDES(mu_);
  // The jobs some node reported its measured GPU energy for, for /metrics.
  std::vector<MeasuredGpuEnergyGauge> MeasuredGpuEnergyGauges() EXCLUDES(mu_);
  // GET /v1/jobs/{id}/deployment: records that `rank` has completed `step` steps and answers
  // with the job's deployment when its version is not `version` (else just the version and the
  // poll interval). Never waits.
  Answer FetchDeployment(const std::string& job_id, int64_t rank, int64_t step, uint64_t version);
  // GET /: the jobs as the status page shows them (status_page.h), the `max_jobs` most recently
  // registered newest first (after a restart, in the store's order of registration), with the
  // counts of loaded and quarantined jobs.
  void FillStatusView(ServerStatusView& view, size_t max_jobs) EXCLUDES(mu_);
  // Jobs by frontier state, and the quarantined ones (GET /metrics).
  JobStateCounts CountJobStates() EXCLUDES(mu_);

 private:
  std::shared_ptr<Job> Find(const std::string& job_id) EXCLUDES(mu_);
  // Every loaded job (the listings, the timer).
  std::vector<std::shared_ptr<Job>> AllJobs() EXCLUDES(mu_);
  // The error for a job that is not loaded: kCorruption when it is quarantined, kNotFound
  // otherwise.
  Error MissingJob(const std::string& job_id) EXCLUDES(mu_);
  // Finds the job, locks it and runs `action` on it (the missing job's error otherwise).
  template <typename Action>
  Answer WithJob(const std::string& job_id, Action&& action);
  // The same for a function of one part of a job (job_rounds.h, ...), called with `args`.
  template <typename... Params, typename... Args>
  Answer WithJob(const std::string& job_id, Answer (*part)(Job&, Params...), Args&&... args);
  // A waiting rank's deadline passed: answered kDeadlineExceeded, if it still waits.
  void ExpireRoundWait(const RoundWait& wait);
  bool OnFrontierStarted(const FrontierTask& task);
  void OnDeadlineDone(DeadlineTask task, const Status& computed);
  // What a deadline computation asks as it runs, besides its own flag.
  bool DeadlineCancelled();
  void OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier, double seconds);
  // The lapse timer's round: every job's power target whose lease ran out is cleared.
  void LapseDuePowerTargets();
  void RunLapseTimer();
  void UpdateGauges();

  JobStore& store_;
  Metrics& metrics_;
  Options options_;
  SystemClock system_clock_;
  Clock& wall_clock_;
  std::atomic<bool> shutting_down_{false};
  std::unique_ptr<FrontierWorker> worker_;
  std::unique_ptr<DeadlineWorker> deadline_worker_;
  std::unique_ptr<LongPollTimer> long_poll_timer_;
  JobContext ctx_;
  SharedMutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_ GUARDED_BY(mu_);
  std::map<std::string, std::string> quarantined_ GUARDED_BY(mu_);  // job id -> why
  uint64_t last_registration_order_ GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> num_jobs_{0};
  std::atomic<int64_t> num_ranks_{0};
  std::atomic<int64_t> num_stragglers_{0};  // over all jobs
  // The lapse timer: a periodic work of a simulated clock, or a thread of its own.
  uint64_t lapse_periodic_id_ = 0;
  Mutex timer_mu_;
  CondVar timer_cv_;
  bool timer_stop_ GUARDED_BY(timer_mu_) = false;
  std::thread lapse_thread_;
};

}  // namespace wattcut::server
