// The server's jobs in memory, written through to the JobStore: the job map, the locking,
// and the order of each change (checked, stored, then applied, so a change that cannot be
// stored leaves the job as it was). What each part decides lives beside it:
//   schedule_decision.h  what a round serves (pure)
//   round_barrier.h      the long-poll barrier of a round
//   profiling_sweep.h    the server-run profiling sweep
//   job_state_codec.h    the stored form of a job and its state document
//   job_views.h          the JSON views
//   rank_profile_aggregation.h  per-rank profiles into the job's profile
//   schedule_text.h      the schedule replies as text
//   deployment.h         barrier-free plan delivery: versions and apply steps
//
// Round protocol (the Zeus one): every rank asks GET /schedule; the request waits
// (a long poll) until all world_size ranks of the job have asked, then all of them are
// answered at once with the schedule of that round. A waiting request gives up after
// the long-poll timeout (kDeadlineExceeded, naming the ranks that never asked), and ends
// with kAborted / kUnavailable when its job is deleted or the server stops; it never hangs.
//
// Start-up profiles (startup_profiles.h): a job registered whose pp_degree and planner
// settings match one gets its profile and frontier at once, stored with the job in the
// transaction that creates it (profile_source "startup:FILE_NAME"); it can be replaced later
// like any profile (PUT profile, rank profiles).
//
// Frontiers are computed by the FrontierWorker and stored (plan/frontier_file.h format)
// when done: after a restart a job whose frontier was stored is ready at once. A stored
// frontier that cannot be read is recomputed, and GET /v1/jobs/{id}/frontier says so
// ("note"). A job whose computation was interrupted (it was computing when the server
// stopped: no stored frontier, or a requested recomputation) is computed again.
//
// Crash-loop breaker: a frontier computation's start is written to the job's stored state
// (frontier_attempts) and cleared when it ends, either way. At start-up, a job whose last
// kMaxInterruptedFrontierAttempts computations were all interrupted (the server died while
// computing them) is not computed again automatically but marked failed, with a message
// that says how to retry (POST /v1/jobs/{id}/frontier); the other jobs start normally.
// A stored job that cannot be read is quarantined: its rows stay in the store untouched,
// it is listed (GET /v1/jobs, /healthz), and the other jobs start.
//
// Every method returns the JSON text of its answer, or an Error whose code says what kind
// of failure it is; server.cc alone turns codes into HTTP statuses (http/http_status.h).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/frontier_worker.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/metrics.h"
#include "wattcut/server/schedule_decision.h"
#include "wattcut/server/startup_profiles.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

// The JSON text of a successful answer, or what went wrong.
using Answer = Result<std::string>;

// Consecutive interrupted frontier computations after which a job is not recomputed at
// start-up.
inline constexpr int kMaxInterruptedFrontierAttempts = 2;

// A stored job that could not be loaded, and why.
struct QuarantinedJob {
  std::string job_id;
  std::string error;
};

class JobRegistry {
 public:
  struct Options {
    std::chrono::milliseconds long_poll_timeout{std::chrono::minutes(10)};
    int max_long_polls = 1024;
    int frontier_threads = 1;
    PlannerSettings default_planner;
    // Profiles for new jobs, their frontiers computed (startup_profiles.h): a job registered
    // without a profile gets the one whose stage count is its pp_degree and whose planner
    // settings are the job's, with that frontier, at registration.
    StartupProfiles startup_profiles;
  };

  JobRegistry(JobStore& store, Metrics& metrics, Options options);
  ~JobRegistry();

  // Loads every stored job, its stored frontier included, and queues the frontiers to
  // compute. Fails only when the store cannot be read at all; a job that cannot be read is
  // quarantined.
  Status Load();
  std::vector<QuarantinedJob> quarantined_jobs();
  // Wakes every long poll (kUnavailable) and stops the frontier workers.
  void Shutdown();

  // Zeus endpoints.
  Answer RegisterJob(const JobRegistration& registration);
  Answer RegisterRank(const std::string& job_id, const RankInfo& info);
  Answer FetchSchedule(const std::string& job_id, int64_t rank);  // long poll
  Answer PostResult(const std::string& job_id, const ProfilingResult& result);

  // wattcut endpoints.
  Answer ListJobs();
  Answer GetJob(const std::string& job_id);
  Answer DeleteJob(const std::string& job_id);
  Answer SetPlanner(const std::string& job_id, const PlannerSettings& planner);
  Answer UploadProfile(const std::string& job_id, const ProfileUpload& upload);
  Answer UploadRankProfile(const std::string& job_id, const RankProfile& profile);
  Answer ComputeFrontierNow(const std::string& job_id);
  Answer FrontierStatus(const std::string& job_id);
  Answer FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit);
  Answer SelectPlan(const std::string& job_id, const PlanSelection& selection);
  Answer ReportStraggler(const std::string& job_id, const StragglerReport& report);
  Answer ListStragglers(const std::string& job_id);
  Answer PreviewSchedule(const std::string& job_id, int64_t rank);  // no waiting
  // PUT / DELETE / GET /v1/jobs/{id}/power_target. A target holds every pipeline to the
  // fastest plan at or below it (deployment.h: PointForPowerTarget, CapDecision), through a new
  // deployment version when that changes what a pipeline runs; no plan that low: the
  // lowest-power plan, and the answer says "met": false. A target set before the frontier is
  // ready is stored and applied when it is. Each answers the target as it stands.
  Answer SetPowerTarget(const std::string& job_id, const PowerTarget& target);
  Answer ClearPowerTarget(const std::string& job_id);
  Answer GetPowerTarget(const std::string& job_id);
  // PUT / DELETE / GET /v1/jobs/{id}/deadline_schedule (deadline_following.h): a schedule over
  // time that caps every pipeline as a power target does, followed at each rank's deployment
  // poll (the point of the moment, and a replan when the job is off it by more than the margin).
  // PUT needs the job's frontier ready (kConflict otherwise) and answers as GET does.
  Answer SetDeadlineSchedule(const std::string& job_id, const DeadlineScheduleSpec& spec);
  Answer ClearDeadlineSchedule(const std::string& job_id);
  Answer GetDeadlineSchedule(const std::string& job_id);
  // The jobs with a power target, for /metrics.
  std::vector<PowerTargetGauge> PowerTargetGauges();
  // GET /v1/jobs/{id}/deployment: records that `rank` has completed `step` steps and answers
  // with the job's deployment when its version is not `version` (else just the version and the
  // poll interval). Never waits.
  Answer FetchDeployment(const std::string& job_id, int64_t rank, int64_t step, uint64_t version);
  // GET /: the jobs as the status page shows them (status_page.h), the `max_jobs` most recently
  // registered newest first (after a restart, in the store's order of registration), with the
  // counts of loaded and quarantined jobs.
  void FillStatusView(ServerStatusView& view, size_t max_jobs);
  // Jobs by frontier state, and the quarantined ones (GET /metrics).
  JobStateCounts CountJobStates();

 private:
  struct Job;

  std::shared_ptr<Job> Find(const std::string& job_id);
  // The error for a job that is not loaded: kCorruption when it is quarantined, kNotFound
  // otherwise.
  Error MissingJob(const std::string& job_id);
  // Builds a loaded job from its stored rows.
  Result<std::shared_ptr<Job>> LoadStoredJob(const StoredJob& stored, bool& compute_frontier);
  bool OnFrontierStarted(const FrontierTask& task);
  void OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier, double seconds);
  // What this round serves (schedule_decision.h), with the job's instruction order built
  // first when needed.
  ScheduleDecision Decide(Job& job, bool may_start_profiling);
  // What `decision` serves `rank` (its stage's list).
  Answer ScheduleAnswer(Job& job, const ScheduleDecision& decision, int rank);
  void CompleteRound(Job& job);
  // Makes `profile` the job's profile (its dropped frequencies the job's profile_warnings),
  // stores it (`stored_csv`, with `source`) and starts its frontier; kInvalidArgument when a
  // rank does not fit it.
  Status InstallProfileLocked(Job& job, AggregatedProfile profile, const std::string& stored_csv,
                              const std::string& source);
  // Aggregates the received rank profiles and installs the result.
  Status InstallRankProfilesLocked(Job& job, const std::string& source);
  void SubmitFrontierLocked(Job& job);
  // A new deployment version when what the ranks should run has changed (deployment.h).
  void RedeployLocked(Job& job);
  // A power target whose lease ran out is cleared (stored, a new deployment) as if DELETEd:
  // checked wherever the target is read (the ranks' deployments, GET, /metrics), so no timer is
  // needed; a target with no reader lapses at the next read.
  void LapsePowerTargetLocked(Job& job);
  // Computes the job's deadline schedule where its frontier is new, replans it where the job is
  // off it (storing the new spec), and redeploys when the point of the moment changed.
  void FollowDeadlineLocked(Job& job);
  Status RecordProfilingResultLocked(Job& job, const ProfilingResult& result);
  // The registered rank `rank` of `job` (its mutex held): kInvalidArgument beyond world_size,
  // kConflict when it has not registered (with how to).
  static Result<const RankInfo*> RegisteredRank(const Job& job, int64_t rank);
  // Stores the job's state document (PutState).
  Status PutStateLocked(const Job& job);
  // Stores `target` as the job's power target (none: cleared) and redeploys.
  Answer ChangePowerTarget(const std::string& job_id, std::optional<PowerTarget> target);
  void UpdateGauges();

  JobStore& store_;
  Metrics& metrics_;
  Options options_;
  std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::map<std::string, std::string> quarantined_;  // job id -> why
  uint64_t last_registration_order_ = 0;            // guarded by mu_ (Job::registration_order)
  std::atomic<int64_t> num_jobs_{0};
  std::atomic<int64_t> num_ranks_{0};
  std::atomic<int64_t> num_stragglers_{0};  // over all jobs
  std::atomic<bool> shutting_down_{false};
  std::unique_ptr<FrontierWorker> worker_;  // last: stopped first
};

}  // namespace wattcut::server
