#include "wattcut/server/job_registry.h"

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/server/job_checks.h"
#include "wattcut/server/job_deadline.h"
#include "wattcut/server/job_decision.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_id.h"
#include "wattcut/server/job_measured_energy.h"
#include "wattcut/server/job_power_target.h"
#include "wattcut/server/job_profiles.h"
#include "wattcut/server/job_restore.h"
#include "wattcut/server/job_rounds.h"
#include "wattcut/server/job_selection.h"
#include "wattcut/server/job_summaries.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

JobRegistry::JobRegistry(JobStore& store, Metrics& metrics, Options options)
    : store_(store),
      metrics_(metrics),
      options_(std::move(options)),
      wall_clock_(options_.wall_clock ? *options_.wall_clock : system_clock_),
      worker_(std::make_unique<FrontierWorker>(
          options_.frontier_threads, [this](const FrontierTask& task) { return OnFrontierStarted(task); },
          [this](const FrontierTask& task, Result<Frontier> frontier, double seconds) {
            OnFrontierDone(task, std::move(frontier), seconds);
          })),
      deadline_worker_(std::make_unique<DeadlineWorker>(
          [this](DeadlineTask task, Status computed) { OnDeadlineDone(std::move(task), computed); },
          [this] { return DeadlineCancelled(); })),
      long_poll_timer_(std::make_unique<LongPollTimer>([this](const RoundWait& wait) { ExpireRoundWait(wait); })),
      ctx_{metrics_,
           wall_clock_,
           *worker_,
           *deadline_worker_,
           shutting_down_,
           options_.long_poll_timeout,
           options_.max_long_polls,
           *long_poll_timer_} {
  lapse_periodic_id_ = wall_clock_.AddPeriodic(options_.lapse_check_interval_s, [this] { LapseDuePowerTargets(); });
  if (lapse_periodic_id_ == 0) lapse_thread_ = std::thread([this] { RunLapseTimer(); });
}

JobRegistry::~JobRegistry() { Shutdown(); }

void JobRegistry::Shutdown() {
  shutting_down_ = true;  // every deadline computation asks this (DeadlineCancelled)
  {
    ReaderLock lock(mu_);
    for (auto& [id, job] : jobs_) {
      MutexLock job_lock(job->mu());
      AnswerEveryWaiter(*job, ctx_, Error::Unavailable("the server is shutting down"));
      job->deadline_computations().Cancel();
    }
  }
  if (lapse_periodic_id_ != 0) {
    wall_clock_.RemovePeriodic(lapse_periodic_id_);
    lapse_periodic_id_ = 0;
  }
  {
    MutexLock lock(timer_mu_);
    timer_stop_ = true;
  }
  timer_cv_.NotifyAll();
  if (lapse_thread_.joinable()) lapse_thread_.join();
  if (long_poll_timer_) long_poll_timer_->Stop();
  if (worker_) worker_->Stop();
  if (deadline_worker_) deadline_worker_->Stop();
}

bool JobRegistry::DeadlineCancelled() {
  if (options_.deadline_checkpoint) options_.deadline_checkpoint();
  return shutting_down_.load();
}

void JobRegistry::RunLapseTimer() {
  const auto interval = std::chrono::duration<double>(options_.lapse_check_interval_s);
  MutexLock lock(timer_mu_);
  while (!timer_stop_) {
    if (timer_cv_.WaitFor(timer_mu_, interval)) continue;  // woken: stop, or spurious
    timer_mu_.unlock();
    LapseDuePowerTargets();
    timer_mu_.lock();
  }
}

void JobRegistry::LapseDuePowerTargets() {
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    if (!job->deleted()) LapsePowerTarget(*job, ctx_);
  }
}

void JobRegistry::UpdateGauges() {
  metrics_.SetGauges(num_jobs_.load(), num_ranks_.load());
  metrics_.SetStragglers(num_stragglers_.load());
}

Error JobRegistry::MissingJob(const std::string& job_id) {
  ReaderLock lock(mu_);
  auto it = quarantined_.find(job_id);
  if (it == quarantined_.end()) return Error::NotFound("unknown job '" + PrintableText(job_id) + "'");
  return Error::Corruption("job '" + PrintableText(job_id) + "' is quarantined: its stored data cannot be read (" +
                           it->second + "); its rows are kept in the store as they are; DELETE /v1/jobs/" +
                           PrintableText(job_id) + " removes them");
}

std::shared_ptr<Job> JobRegistry::Find(const std::string& job_id) {
  ReaderLock lock(mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Job>> JobRegistry::AllJobs() {
  ReaderLock lock(mu_);
  std::vector<std::shared_ptr<Job>> jobs;
  jobs.reserve(jobs_.size());
  for (const auto& [id, job] : jobs_) jobs.push_back(job);
  return jobs;
}

template <typename Action>
Answer JobRegistry::WithJob(const std::string& job_id, Action&& action) {
  std::shared_ptr<Job> job = Find(job_id);
  if (!job) return MissingJob(job_id);
  MutexLock lock(job->mu());
  return action(*job);
}

template <typename... Params, typename... Args>
Answer JobRegistry::WithJob(const std::string& job_id, Answer (*part)(Job&, Params...), Args&&... args) {
  std::shared_ptr<Job> job = Find(job_id);
  if (!job) return MissingJob(job_id);
  MutexLock lock(job->mu());
  return part(*job, std::forward<Args>(args)...);
}

// ---- The map: load, register, delete.

Status JobRegistry::Load() {
  auto stored = store_.LoadAll();
  if (!stored) return stored.error();
  std::vector<std::shared_ptr<Job>> to_plan;  // submitted once every job is findable
  for (StoredJob& s : *stored) {
    auto restored = RestoreJob(store_, s, wall_clock_.NowS());
    std::string().swap(s.frontier_text);
    if (!restored) {
      WriterLock lock(mu_);
      quarantined_[s.job_id] = restored.error().message;
      continue;
    }
    std::shared_ptr<Job> job = std::move(restored->job);
    if (restored->compute_frontier) to_plan.push_back(job);
    {
      MutexLock job_lock(job->mu());
      num_ranks_ += job->num_registered();
      num_stragglers_ += static_cast<int64_t>(job->stragglers().size());
    }
    WriterLock lock(mu_);
    job->SetRegistrationOrderBeforePublishing(++last_registration_order_);
    jobs_[s.job_id] = std::move(job);
    ++num_jobs_;
  }
  for (const auto& job : to_plan) {
    MutexLock lock(job->mu());
    SubmitFrontier(*job, ctx_);
  }
  // Deadline schedules are computed again on their stored frontiers in the background: the
  // server listens at once, and the ranks keep their deployment until each is back.
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    StartDeadlineAfterRestore(*job, ctx_);
  }
  UpdateGauges();
  return Status::Ok();
}

std::vector<QuarantinedJob> JobRegistry::quarantined_jobs() {
  ReaderLock lock(mu_);
  std::vector<QuarantinedJob> out;
  for (const auto& [id, error] : quarantined_) out.push_back({id, error});
  return out;
}

Answer JobRegistry::RegisterJob(const JobRegistration& registration) {
  const PlannerSettings planner = registration.planner.value_or(options_.default_planner);
  if (Status s = CheckPipelineLimits(registration.info, planner); !s) return s.error();
  auto job = std::make_shared<Job>(store_, registration.info, planner);
  Result<std::string> id = Error{"not created"};
  {
    // Nobody else can see the job yet; its lock is taken for the analysis' sake, and released
    // before the map's (the map's lock is taken first everywhere else).
    MutexLock job_lock(job->mu());
    json stored_info = ToJson(job->info());
    stored_info.erase("job_id");
    // A start-up profile for this pipeline depth and these settings: the job has its profile and
    // frontier from the start, so its first round, and its first deployment, serve the plan.
    const std::shared_ptr<const StartupProfile> startup =
        MatchStartupProfile(options_.startup_profiles, job->info().pp_degree, planner);
    std::optional<JobStore::InitialProfile> initial;
    const double now = wall_clock_.NowS();
    if (startup) {
      initial = JobStore::InitialProfile{startup->csv, startup->source(), startup->frontier_text,
                                         AnswerText(FrontierSummaryJson(*startup->frontier, startup->compute_seconds))};
      job->RestoreProfile(startup->source(), startup->profile, startup->warnings);
      job->BeginFrontierComputation();
      job->SetFrontierReady(startup->frontier, startup->compute_seconds);
      // Deployment 1, stored with the job: no rank has run a step yet, so it applies from step 0.
      job->SetDeploymentBeforePublishing(Deployment{
          1, 0, DeploymentTarget::From(Decide(*job, now, /*may_start_profiling=*/false), job->frontier_generation())});
    }
    const JobInfo info = job->info();
    id = store_.CreateJob([&info, now](int64_t seq) { return JobIdFor(info, seq, now); }, stored_info.dump(),
                          ToJson(planner).dump(), EncodeJobState(job->State()), initial ? &*initial : nullptr);
    if (!id) return NothingStored(id.error());
    job->SetIdBeforePublishing(*id);
  }
  {
    WriterLock lock(mu_);
    job->SetRegistrationOrderBeforePublishing(++last_registration_order_);
    jobs_[*id] = job;
    ++num_jobs_;
  }
  UpdateGauges();
  // Zeus returns the job id as a bare JSON string.
  return AnswerText(json(*id));
}

Answer JobRegistry::DeleteJob(const std::string& job_id) {
  std::shared_ptr<Job> job;
  {
    WriterLock lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      if (quarantined_.count(job_id) == 0) return Error::NotFound("unknown job '" + PrintableText(job_id) + "'");
      if (auto s = store_.DeleteJob(job_id); !s) {
        return NothingStored(s.error());
      }
      quarantined_.erase(job_id);
      return AnswerText(json{{"deleted", job_id}});
    }
    job = it->second;
    if (auto s = store_.DeleteJob(job_id); !s) {
      return NothingStored(s.error());
    }
    jobs_.erase(it);
    --num_jobs_;
  }
  {
    MutexLock lock(job->mu());
    job->MarkDeleted();
    AnswerEveryWaiter(*job, ctx_, Error::Aborted("job '" + job->id() + "' was deleted while rank waited"));
    job->deadline_computations().Cancel();
    num_ranks_ -= job->num_registered();
    num_stragglers_ -= static_cast<int64_t>(job->stragglers().size());
  }
  UpdateGauges();
  return AnswerText(json{{"deleted", job_id}});
}

// ---- The frontier worker's callbacks.

bool JobRegistry::OnFrontierStarted(const FrontierTask& task) {
  std::shared_ptr<Job> job = Find(task.job_id);
  if (!job) return false;
  MutexLock lock(job->mu());
  return FrontierStarted(*job, task);
}

void JobRegistry::OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier, double seconds) {
  metrics_.RecordFrontier(frontier.ok(), seconds);
  FrontierResult result = FrontierResultOf(std::move(frontier), seconds);
  std::shared_ptr<Job> job = Find(task.job_id);
  if (!job) return;
  MutexLock lock(job->mu());
  FrontierDone(*job, ctx_, task, std::move(result));
  StartDeadlineOnNewFrontier(*job, ctx_);
}

void JobRegistry::OnDeadlineDone(DeadlineTask task, const Status& computed) {
  std::shared_ptr<Job> job = Find(task.job_id);
  if (!job) return;
  MutexLock lock(job->mu());
  ApplyDeadlineDone(*job, ctx_, std::move(task), computed);
}

// ---- The locking entry points.

Answer JobRegistry::RegisterRank(const std::string& job_id, const RankInfo& info) {
  Answer answer = WithJob(job_id, [&](Job& job) -> Answer {
    job.mu().AssertHeld();
    JobEdit edit;
    edit.register_rank = info;
    if (Status s = job.Commit(std::move(edit)); !s) return s.error();
    return AnswerText(nullptr);
  });
  if (answer) {
    ++num_ranks_;
    UpdateGauges();
  }
  return answer;
}

std::optional<Answer> JobRegistry::WaitForSchedule(const std::string& job_id, int64_t rank, const ParkRank& park) {
  std::shared_ptr<Job> job = Find(job_id);
  if (!job) return MissingJob(job_id);
  MutexLock lock(job->mu());
  return server::FetchSchedule(*job, ctx_, rank, park);
}

Answer JobRegistry::FetchSchedule(const std::string& job_id, int64_t rank) {
  auto answered = std::make_shared<std::promise<Answer>>();
  std::future<Answer> later = answered->get_future();
  std::optional<Answer> now = WaitForSchedule(job_id, rank, [answered](const RoundWait&) -> RoundReply {
    return [answered](Answer answer) { answered->set_value(std::move(answer)); };
  });
  return now ? std::move(*now) : later.get();
}

void JobRegistry::AbandonRoundWait(const RoundWait& wait) {
  std::shared_ptr<Job> job = Find(wait.job_id);
  if (!job) return;
  MutexLock lock(job->mu());
  EndRoundWait(*job, ctx_, wait, /*timed_out=*/false);
}

void JobRegistry::ExpireRoundWait(const RoundWait& wait) {
  std::shared_ptr<Job> job = Find(wait.job_id);
  if (!job) return;
  MutexLock lock(job->mu());
  EndRoundWait(*job, ctx_, wait, /*timed_out=*/true);
}

Answer JobRegistry::PostResult(const std::string& job_id, const ProfilingResult& result) {
  return WithJob(job_id, &server::PostResult, ctx_, result);
}

Answer JobRegistry::PreviewSchedule(const std::string& job_id, int64_t rank) {
  return WithJob(job_id, &server::PreviewSchedule, ctx_, rank);
}

Answer JobRegistry::FetchDeployment(const std::string& job_id, int64_t rank, int64_t step, uint64_t version) {
  if (Status s = CheckTrainingStep(step, "query parameter 'step'"); !s) return s.error();
  return WithJob(job_id, [&](Job& job) -> Answer {
    job.mu().AssertHeld();
    auto registered = job.RegisteredRank(rank);
    if (!registered) return registered.error();
    const RankInfo rank_info = **registered;
    if (shutting_down_) return Error::Unavailable("the server is shutting down");
    job.ReportStep(static_cast<size_t>(rank), step, SteadyNowS());
    // A poll is a write: a lapsed target goes and the deadline schedule is followed first.
    LapsePowerTarget(job, ctx_);
    FollowDeadline(job, ctx_);
    job.CountSaving();
    if (job.deadline_computations().deployment_not_known() && version != job.deployment().version) {
      return Error::Unavailable("job '" + job.id() +
                                "': its deadline schedule is being computed again after a restart; keep the "
                                "current plan and ask again");
    }
    return DeploymentAnswer(job, ctx_, rank_info, version);
  });
}

Answer JobRegistry::ListJobs() {
  json out = json::array();
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    out.push_back(JobListEntry(*job));
  }
  json quarantined = json::array();
  for (const QuarantinedJob& q : quarantined_jobs()) quarantined.push_back({{"job_id", q.job_id}, {"error", q.error}});
  return AnswerText(json{{"jobs", out}, {"quarantined", quarantined}});
}

Answer JobRegistry::GetJob(const std::string& job_id) {
  return WithJob(job_id, [&](Job& job) {
    job.mu().AssertHeld();
    return AnswerText(JobJson(job));
  });
}

Answer JobRegistry::SetPlanner(const std::string& job_id, const PlannerSettings& planner) {
  return WithJob(job_id, [&](Job& job) {
    job.mu().AssertHeld();
    return server::SetPlanner(job, ctx_, planner);
  });
}

Answer JobRegistry::SetPlanner(const std::string& job_id, const PlannerPatch& patch) {
  return WithJob(job_id, [&](Job& job) {
    job.mu().AssertHeld();
    return server::SetPlanner(job, ctx_, patch);
  });
}

Answer JobRegistry::UploadProfile(const std::string& job_id, const ProfileUpload& upload) {
  return WithJob(job_id, &server::UploadProfile, ctx_, upload);
}

Answer JobRegistry::UploadRankProfile(const std::string& job_id, const RankProfile& profile) {
  return WithJob(job_id, &server::UploadRankProfile, ctx_, profile);
}

Answer JobRegistry::ComputeFrontierNow(const std::string& job_id) {
  return WithJob(job_id, &server::ComputeFrontierNow, ctx_);
}

Answer JobRegistry::FrontierStatus(const std::string& job_id) { return WithJob(job_id, &server::FrontierStatus); }

Answer JobRegistry::FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit) {
  return WithJob(job_id, &server::FrontierPoints, offset, limit);
}

Answer JobRegistry::SelectPlan(const std::string& job_id, const PlanSelection& selection) {
  return WithJob(job_id, &server::SelectPlan, ctx_, selection);
}

Answer JobRegistry::ReportStraggler(const std::string& job_id, const StragglerReport& report) {
  Answer answer = WithJob(job_id, [&](Job& job) {
    job.mu().AssertHeld();
    const int64_t before = static_cast<int64_t>(job.stragglers().size());
    Answer reported = server::ReportStraggler(job, ctx_, report);
    num_stragglers_ += static_cast<int64_t>(job.stragglers().size()) - before;
    return reported;
  });
  UpdateGauges();
  return answer;
}

Answer JobRegistry::ListStragglers(const std::string& job_id) { return WithJob(job_id, &server::ListStragglers); }

Answer JobRegistry::SetPowerTarget(const std::string& job_id, const PowerTarget& target) {
  return WithJob(job_id, &server::ChangePowerTarget, ctx_, target);
}

Answer JobRegistry::ClearPowerTarget(const std::string& job_id) {
  return WithJob(job_id, &server::ChangePowerTarget, ctx_, std::nullopt);
}

Answer JobRegistry::GetPowerTarget(const std::string& job_id) { return WithJob(job_id, &server::GetPowerTarget); }

Answer JobRegistry::SetDeadlineSchedule(const std::string& job_id, const DeadlineScheduleSpec& spec) {
  // Begun under the job's lock, computed without it (a rank's poll never waits for a schedule),
  // stored under it again if nothing newer came meanwhile (job_deadline.h).
  std::optional<DeadlineComputation> computation;
  Answer begun = WithJob(job_id, [&](Job& job) -> Answer {
    job.mu().AssertHeld();
    Result<DeadlineComputation> c = BeginSetDeadline(job, ctx_, spec);
    if (!c) return c.error();
    computation = std::move(*c);
    return std::string();
  });
  if (!begun) return begun;
  const std::shared_ptr<std::atomic<bool>> flag = computation->cancel;
  Status computed = ComputeDeadline(computation->following, *computation->frontier, computation->info,
                                    computation->now_s, [this, flag] { return flag->load() || DeadlineCancelled(); });
  return WithJob(job_id, [&](Job& job) -> Answer {
    job.mu().AssertHeld();
    return FinishSetDeadline(job, ctx_, std::move(*computation), computed);
  });
}

Answer JobRegistry::ClearDeadlineSchedule(const std::string& job_id) {
  return WithJob(job_id, &server::ClearDeadlineSchedule, ctx_);
}

Answer JobRegistry::GetDeadlineSchedule(const std::string& job_id) {
  return WithJob(job_id, &server::GetDeadlineSchedule, ctx_);
}

Answer JobRegistry::ReportMeasuredGpuEnergy(const std::string& job_id, const std::string& node,
                                            const NodeGpuEnergy& report) {
  if (Status s = CheckNodeName(node); !s) return s.error();
  return WithJob(job_id, &server::ReportMeasuredGpuEnergy, node, report);
}

Answer JobRegistry::MeasuredGpuEnergyNodes(const std::string& job_id, int64_t offset, int64_t limit) {
  return WithJob(job_id, &server::MeasuredGpuEnergyNodes, offset, limit);
}

}  // namespace wattcut::server
