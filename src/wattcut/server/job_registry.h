// The server's jobs in memory, written through to the JobStore, and the one place that
// decides which schedule each rank gets.
//
// Round protocol (the Zeus one): every rank asks GET /schedule; the request waits
// (a long poll) until all world_size ranks of the job have asked, then all of them are
// answered at once with the schedule of that round. A waiting request gives up after
// the long-poll timeout with a 504 that names the ranks that never asked, and returns
// 410/503 when its job is deleted or the server stops; it never hangs.
//
// What a round serves, in order of precedence:
//  1. the frontier is ready: the selected plan (fastest by default) to every pipeline,
//     except that when stragglers are reported, every non-straggler pipeline gets the
//     plan at min(T', T*) (Frontier::IndexForIterationTime);
//  2. the job has a profile but its frontier is still computing (also right after a
//     restart, when it is recomputed) or failed: every instruction at the rank's
//     highest declared frequency (AllMax);
//  3. no profile: the server-run profiling sweep, one frequency per round from the
//     highest frequency every rank declared downward; the ranks' results (time and
//     energy breakdowns) become the profile, and the frontier is computed from it.
//
// Crash-loop breaker: a frontier computation's start is written to the job's stored state
// (frontier_attempts) and cleared when it ends, either way. At start-up, a job whose last
// kMaxInterruptedFrontierAttempts computations were all interrupted (the server died while
// computing them) is not computed again automatically but marked failed, with a message
// that says how to retry (POST /v1/jobs/{id}/frontier); the other jobs start normally.
// A stored job that cannot be read is quarantined: its rows stay in the store untouched,
// it is listed (GET /v1/jobs, /healthz), and the other jobs start.
//
// With dp/tp > 1 the planner sees one pipeline of pp_degree stages: per-rank profiles
// are aggregated per pp rank (max time and summed energy over the tp ranks of a
// replica, then the mean over dp replicas; a frequency only where every rank of the stage
// measured it, the others listed in the job's profile_warnings) and each stage's plan goes
// to all of its replicas.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "wattcut/profile/rank_aggregation.h"
#include "wattcut/server/frontier_worker.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/metrics.h"

namespace wattcut::server {

struct Reply {
  int status = 200;
  std::string body;  // JSON
};

// Aggregates per-rank profiles into one pipeline profile of pp_degree stages with the rule
// of profile/rank_aggregation.h (the CSV reader's): per (pp, dp) replica the max time and
// the summed energy over its tp ranks, then the mean over dp replicas, keeping for each
// (stage, instruction) the frequencies every rank of the stage measured (time and
// energy); each frequency left out is returned as a DroppedFrequency. Fails when a
// pp_rank is outside 0..pp_degree-1 or a stage has no measurements.
Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree);

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
  };

  JobRegistry(JobStore& store, Metrics& metrics, Options options);
  ~JobRegistry();

  // Loads every stored job and queues the frontiers to recompute. Fails only when the store
  // cannot be read at all; a job that cannot be read is quarantined.
  Status Load();
  std::vector<QuarantinedJob> quarantined_jobs();
  // Wakes every long poll (503) and stops the frontier workers.
  void Shutdown();

  // Zeus endpoints.
  Reply RegisterJob(const JobRegistration& registration);
  Reply RegisterRank(const std::string& job_id, const RankInfo& info);
  Reply FetchSchedule(const std::string& job_id, int64_t rank);  // long poll
  Reply PostResult(const std::string& job_id, const ProfilingResult& result);

  // wattcut endpoints.
  Reply ListJobs();
  Reply GetJob(const std::string& job_id);
  Reply DeleteJob(const std::string& job_id);
  Reply SetPlanner(const std::string& job_id, const PlannerSettings& planner);
  Reply UploadProfile(const std::string& job_id, const ProfileUpload& upload);
  Reply UploadRankProfile(const std::string& job_id, const RankProfile& profile);
  Reply ComputeFrontierNow(const std::string& job_id);
  Reply FrontierStatus(const std::string& job_id);
  Reply FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit);
  Reply SelectPlan(const std::string& job_id, const PlanSelection& selection);
  Reply ReportStraggler(const std::string& job_id, const StragglerReport& report);
  Reply ListStragglers(const std::string& job_id);
  Reply PreviewSchedule(const std::string& job_id, int64_t rank);  // no waiting

 private:
  struct Job;
  struct Decision;

  std::shared_ptr<Job> Find(const std::string& job_id);
  // The reply for a job that is not loaded: 409 when it is quarantined, 404 otherwise.
  Reply MissingJob(const std::string& job_id);
  // Reads one stored job into `job` (may throw on corrupt JSON).
  Status LoadStoredJob(const StoredJob& stored, Job& job);
  bool OnFrontierStarted(const FrontierTask& task);
  void CompleteRound(Job& job);
  Decision Decide(Job& job, bool start_profiling);
  Reply ScheduleReply(Job& job, const Decision& decision, int rank);
  // Reads an uploaded profile CSV and installs it (InstallProfileLocked).
  Reply SetProfileLocked(Job& job, const std::string& csv, const std::string& source);
  // Makes `profile` the job's profile (its dropped frequencies the job's profile_warnings),
  // stores it as `stored_csv` and starts its frontier; 422 when a rank does not fit it.
  Reply InstallProfileLocked(Job& job, AggregatedProfile profile, const std::string& stored_csv,
                             const std::string& source);
  void SubmitFrontierLocked(Job& job);
  void OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier, double seconds);
  std::string StateJson(const Job& job) const;
  void RecordProfilingResultLocked(Job& job, const ProfilingResult& result, Reply& reply);
  void UpdateGauges();

  JobStore& store_;
  Metrics& metrics_;
  Options options_;
  std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::map<std::string, std::string> quarantined_;  // job id -> why
  std::atomic<int64_t> num_jobs_{0};
  std::atomic<int64_t> num_ranks_{0};
  std::atomic<bool> shutting_down_{false};
  std::unique_ptr<FrontierWorker> worker_;  // last: stopped first
};

}  // namespace wattcut::server
