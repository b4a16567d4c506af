// One planning job in memory: what is stored of it (its rows and its state document,
// job_store.h) and what the server keeps beside (rounds in progress, the frontier, deployments
// and their progress, caches).
//
// Job is the one owner of that state. Every change that is stored goes through Commit, which
// checks the edit against the job (job_edit.h), stores it in one transaction, and only then
// applies it: a change the store refuses leaves the job exactly as it was, and nothing is ever
// restored by hand. Bookkeeping (the round number, the deployment version, the frontier
// attempts) goes through CommitBookkeeping: the same check and store, applied even when the
// store fails, because the ranks must be answered either way and the next stored change
// carries it. What is never stored (the frontier computed from the stored profile, the steps
// the ranks report, caches) changes through the named methods below.
//
// Locking: every member below the mutex is guarded by it (mu()); the registry's map lock is
// taken before a job's, never after (job_registry.h). The compiler checks both with Clang's
// thread-safety analysis (base/thread_annotations.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/server/deadline_computations.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/deployment.h"
#include "wattcut/server/energy_saving.h"
#include "wattcut/server/frontier_state.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/job_edit.h"
#include "wattcut/server/job_state_codec.h"
#include "wattcut/server/job_store.h"
#include "wattcut/server/profiling_sweep.h"
#include "wattcut/server/round_barrier.h"
#include "wattcut/server/schedule_decision.h"
#include "wattcut/server/schedule_text.h"

namespace wattcut::server {

// A change the store refused: kIOError "could not persist the change, nothing was changed: ...".
Error NothingStored(const Error& store_error);

class Job {
 public:
  // A new job of `info` with `planner`, no rank registered (registration, job_registry.cc).
  Job(JobStore& store, JobInfo info, PlannerSettings planner);
  // A job read back from the store (job_restore.h), its rows and state as decoded.
  Job(JobStore& store, DecodedJob decoded);
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  Mutex& mu() const RETURN_CAPABILITY(mu_) { return mu_; }

  // Before the job is in the registry's map (nobody else can see it): its id, and its place in
  // the order of registration (1 for the first job registered or loaded, then 2, ...; the
  // status page shows the newest). registration_order() needs no lock: it never changes after.
  void SetIdBeforePublishing(const std::string& job_id) REQUIRES(mu_) { info_.job_id = job_id; }
  void SetRegistrationOrderBeforePublishing(uint64_t order) { registration_order_ = order; }
  uint64_t registration_order() const { return registration_order_; }

  // ---- Stored changes.
  // Checks `edit` (kInvalidArgument / kConflict, the job's id in the message), stores it
  // (kIOError "could not persist the change, nothing was changed: ..."), applies it.
  Status Commit(JobEdit edit) REQUIRES(mu_);
  // The same check and store; applied even when the store fails. The check's error (nothing
  // applied) or the store's (applied, not stored).
  Status CommitBookkeeping(JobEdit edit) REQUIRES(mu_);
  // The state document this job would store after `edit`.
  JobState StateAfter(const JobEdit& edit) const REQUIRES(mu_);
  JobState State() const REQUIRES(mu_) { return StateAfter(JobEdit{}); }

  // The registered rank `rank`: kInvalidArgument beyond world_size, kConflict when it has not
  // registered (with how to). Every endpoint that names a rank asks this.
  Result<const RankInfo*> RegisteredRank(int64_t rank) const REQUIRES(mu_);

  // ---- Rounds (round_barrier.h): joining, waiting and leaving are not stored; a round's end
  // is (JobEdit::complete_round).
  bool JoinRound(size_t rank) REQUIRES(mu_) { return barrier_.Join(rank); }
  void LeaveRound(size_t rank) REQUIRES(mu_) { barrier_.Leave(rank); }
  uint64_t NextRoundWaiterId() REQUIRES(mu_) { return barrier_.NextWaiterId(); }
  void WaitInRound(size_t rank, RoundWaiter waiter) REQUIRES(mu_) { barrier_.Park(rank, std::move(waiter)); }
  std::optional<RoundWaiter> LeaveRound(size_t rank, uint64_t waiter_id) REQUIRES(mu_) {
    return barrier_.Leave(rank, waiter_id);
  }
  std::vector<std::pair<size_t, RoundWaiter>> TakeRoundWaiters() REQUIRES(mu_) { return barrier_.TakeWaiters(); }
  const RoundBarrier& barrier() const REQUIRES(mu_) { return barrier_; }
  // What the last completed round served.
  const ScheduleDecision& decision() const REQUIRES(mu_) { return decision_; }
  void SetRoundDecision(ScheduleDecision decision) REQUIRES(mu_) { decision_ = std::move(decision); }

  // ---- The frontier (not stored here: the FrontierWorker's result is stored by the registry).
  // A computation starts: a new generation, computing, the old frontier dropped. Its
  // generation (what the worker's task carries).
  uint64_t BeginFrontierComputation() REQUIRES(mu_);
  void SetFrontierReady(std::shared_ptr<const Frontier> frontier, double compute_seconds) REQUIRES(mu_);
  void SetFrontierFailed(std::string error) REQUIRES(mu_);
  void SetFrontierFailedAfter(std::string error, double compute_seconds) REQUIRES(mu_);
  // Why the stored frontier was not used (shown while it is recomputed and after).
  void SetFrontierNote(std::string note) REQUIRES(mu_) { frontier_note_ = std::move(note); }
  // The profile read back from the store (job_restore.h).
  void RestoreProfile(std::string source, std::shared_ptr<const Profile> profile,
                      std::vector<DroppedFrequency> warnings) REQUIRES(mu_);

  // ---- Deletion: a computation in flight is not installed (the registry answers the waiters).
  void MarkDeleted() REQUIRES(mu_);
  bool deleted() const REQUIRES(mu_) { return deleted_; }

  // ---- Deployments (deployment.h): what the ranks run is decided again after a restart
  // (not stored); the steps they report and the energy that saved are in memory only.
  void SetDeploymentTargetAfterRestore(DeploymentTarget target) REQUIRES(mu_) {
    deployment_.target = std::move(target);
  }
  // The deployment a job registered with a start-up profile is created with (stored with it).
  void SetDeploymentBeforePublishing(Deployment deployment) REQUIRES(mu_) { deployment_ = std::move(deployment); }
  void ReportStep(size_t rank, int64_t step, double now_s) REQUIRES(mu_) { progress_.Report(rank, step, now_s); }
  // Counts the energy the deployed plan saved over the steps reported since the last call.
  void CountSaving() REQUIRES(mu_);
  // A deadline schedule computed again for the same stored spec (a new frontier, a restart).
  // kInvalidArgument when the spec differs from the stored one: that is a Commit.
  Status RefreshDeadline(DeadlineFollowing following) REQUIRES(mu_);

  // ---- Caches over the stored state.
  // The instruction order of the job's schedule (AllMax and profiling serve it), built when
  // first needed; the error when the planner settings give none.
  Result<const PipelineSchedule*> InstructionOrder() REQUIRES(mu_);
  const std::optional<PipelineSchedule>& instruction_order_if_built() const REQUIRES(mu_) { return schedule_; }
  // Every stage's frequency schedule of point `index` of the ready frontier (as text).
  std::shared_ptr<const StageSchedules> PlanSchedules(size_t index) REQUIRES(mu_);
  // The AllMax point of the ready frontier; nullopt without one or when the profile lacks it.
  const std::optional<AllMaxPoint>& AllMax() REQUIRES(mu_);
  // What one step of the deployed target saves against AllMax, and uses (energy_saving.h);
  // the energy nullopt without a frontier of the target's or, for AllMax, an AllMax point.
  double StepSaving() REQUIRES(mu_);
  std::optional<double> StepEnergy() REQUIRES(mu_);
  // The selected point of the ready frontier.
  size_t SelectedPoint() const REQUIRES(mu_) { return SelectedIndex(*frontier_, selection_); }
  // Every rank profile received so far, aggregated into one pipeline profile.
  Result<AggregatedProfile> AggregateReceivedRankProfiles() const REQUIRES(mu_);

  // ---- Readers.
  const JobInfo& info() const REQUIRES(mu_) { return info_; }
  const std::string& id() const REQUIRES(mu_) { return info_.job_id; }
  const PlannerSettings& planner() const REQUIRES(mu_) { return planner_; }
  const std::vector<std::optional<RankInfo>>& ranks() const REQUIRES(mu_) { return ranks_; }
  int num_registered() const REQUIRES(mu_) { return num_registered_; }
  const std::optional<RankProfile>& rank_profile(size_t rank) const REQUIRES(mu_) { return rank_profiles_.at(rank); }
  int num_rank_profiles() const REQUIRES(mu_) { return num_rank_profiles_; }
  int num_results() const REQUIRES(mu_) { return num_results_; }
  const ProfilingSweep& sweep() const REQUIRES(mu_) { return sweep_; }
  const PlanSelection& selection() const REQUIRES(mu_) { return selection_; }
  const Stragglers& stragglers() const REQUIRES(mu_) { return stragglers_; }
  const std::optional<PowerTarget>& power_target() const REQUIRES(mu_) { return power_target_; }
  const std::optional<DeadlineFollowing>& deadline() const REQUIRES(mu_) { return deadline_; }
  // The deadline schedule's computations in flight, off this lock (deadline_computations.h).
  DeadlineComputations& deadline_computations() REQUIRES(mu_) { return deadline_computations_; }
  const DeadlineComputations& deadline_computations() const REQUIRES(mu_) { return deadline_computations_; }
  const MeasuredGpuEnergy& measured_gpu_energy() const REQUIRES(mu_) { return measured_gpu_energy_; }
  const std::string& profile_source() const REQUIRES(mu_) { return profile_source_; }
  const std::shared_ptr<const Profile>& profile() const REQUIRES(mu_) { return profile_; }
  const std::vector<DroppedFrequency>& profile_warnings() const REQUIRES(mu_) { return profile_warnings_; }
  FrontierState frontier_state() const REQUIRES(mu_) { return frontier_state_; }
  const std::string& frontier_error() const REQUIRES(mu_) { return frontier_error_; }
  const std::string& frontier_note() const REQUIRES(mu_) { return frontier_note_; }
  double frontier_seconds() const REQUIRES(mu_) { return frontier_seconds_; }
  uint64_t frontier_generation() const REQUIRES(mu_) { return frontier_generation_; }
  int frontier_attempts() const REQUIRES(mu_) { return frontier_attempts_; }
  const std::shared_ptr<const Frontier>& frontier() const REQUIRES(mu_) { return frontier_; }
  // The frontier when it is ready, else null.
  const Frontier* ready_frontier() const REQUIRES(mu_) {
    return frontier_state_ == FrontierState::kReady ? frontier_.get() : nullptr;
  }
  const Deployment& deployment() const REQUIRES(mu_) { return deployment_; }
  const StepProgress& progress() const REQUIRES(mu_) { return progress_; }
  const EnergySavingTally& saving() const REQUIRES(mu_) { return saving_; }

 private:
  // The store's write for `edit` (the table in job_edit.h).
  Status Store(const JobEdit& edit) REQUIRES(mu_);
  Status Check(const JobEdit& edit) const REQUIRES(mu_);
  void Apply(JobEdit edit) REQUIRES(mu_);
  // The job's value of each part of the state document, in the order of StateParts (job_edit.h):
  // Apply sets each from its part, StateAfter reads each part or, when unset, its value.
  template <class Self>  // Job or const Job
  static auto StateValuesOf(Self& job) REQUIRES(job.mu_) {
    return std::tie(job.selection_, job.stragglers_, job.power_target_, job.deadline_, job.sweep_,
                    job.frontier_attempts_, job.deployment_, job.measured_gpu_energy_, job.barrier_);
  }
  // Sizes the per-rank state for info_.world_size ranks, all empty.
  void SizeRankState() REQUIRES(mu_);
  Status CheckRankAgainstProfile(const RankInfo& rank, const Profile* profile) const REQUIRES(mu_);

  JobStore& store_;
  uint64_t registration_order_ = 0;
  mutable Mutex mu_;

  JobInfo info_ GUARDED_BY(mu_);
  PlannerSettings planner_ GUARDED_BY(mu_);
  std::vector<std::optional<RankInfo>> ranks_ GUARDED_BY(mu_);
  int num_registered_ GUARDED_BY(mu_) = 0;
  std::vector<std::optional<RankProfile>> rank_profiles_ GUARDED_BY(mu_);
  int num_rank_profiles_ GUARDED_BY(mu_) = 0;
  std::vector<uint8_t> has_result_ GUARDED_BY(mu_);  // per rank: a ProfilingResult is stored
  int num_results_ GUARDED_BY(mu_) = 0;
  RoundBarrier barrier_ GUARDED_BY(mu_);
  ScheduleDecision decision_ GUARDED_BY(mu_);
  ProfilingSweep sweep_ GUARDED_BY(mu_);
  PlanSelection selection_ GUARDED_BY(mu_);
  Stragglers stragglers_ GUARDED_BY(mu_);
  std::optional<PowerTarget> power_target_ GUARDED_BY(mu_);
  std::optional<DeadlineFollowing> deadline_ GUARDED_BY(mu_);
  DeadlineComputations deadline_computations_ GUARDED_BY(mu_);
  MeasuredGpuEnergy measured_gpu_energy_ GUARDED_BY(mu_);
  std::string profile_source_ GUARDED_BY(mu_);
  std::shared_ptr<const Profile> profile_ GUARDED_BY(mu_);
  std::vector<DroppedFrequency> profile_warnings_ GUARDED_BY(mu_);
  FrontierState frontier_state_ GUARDED_BY(mu_) = FrontierState::kNone;
  std::string frontier_error_ GUARDED_BY(mu_);
  std::string frontier_note_ GUARDED_BY(mu_);
  double frontier_seconds_ GUARDED_BY(mu_) = 0;
  uint64_t frontier_generation_ GUARDED_BY(mu_) = 0;
  int frontier_attempts_ GUARDED_BY(mu_) = 0;  // started and not finished since one finished
  std::shared_ptr<const Frontier> frontier_ GUARDED_BY(mu_);
  std::map<size_t, std::shared_ptr<const StageSchedules>> plan_cache_ GUARDED_BY(mu_);
  std::optional<PipelineSchedule> schedule_ GUARDED_BY(mu_);
  Deployment deployment_ GUARDED_BY(mu_);
  StepProgress progress_ GUARDED_BY(mu_);
  EnergySavingTally saving_ GUARDED_BY(mu_);
  std::optional<AllMaxPoint> all_max_ GUARDED_BY(mu_);
  uint64_t all_max_generation_ GUARDED_BY(mu_) = 0;
  bool deleted_ GUARDED_BY(mu_) = false;
};

}  // namespace wattcut::server
