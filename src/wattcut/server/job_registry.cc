#include "wattcut/server/job_registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>
#include <set>

#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/base/steady_time.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/deadline/schedule_following.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/deployment.h"
#include "wattcut/server/energy_saving.h"
#include "wattcut/server/frontier_state.h"
#include "wattcut/server/job_state_codec.h"
#include "wattcut/server/job_views.h"
#include "wattcut/server/profiling_sweep.h"
#include "wattcut/server/rank_profile_aggregation.h"
#include "wattcut/server/round_barrier.h"
#include "wattcut/server/schedule_text.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

std::string Text(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

Error StoreFailed(const Error& error) {
  return Error::IOError("could not persist the change, nothing was changed: " + error.message);
}

// "job 'ID': rank R is out of range [0, N)", the way every endpoint says it.
Error RankOutOfRange(const std::string& prefix, int64_t rank, int world_size) {
  return Error{prefix + "rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(world_size) + ")"};
}

// The planner's bounds on a job's pipeline (pp_degree stages x num_microbatches), checked
// when the settings arrive, before any work.
Status CheckPipelineLimits(const JobInfo& info, const PlannerSettings& planner) {
  if (planner.num_microbatches < 1) return Status::Ok();
  if (auto s = CheckPipelineShape(info.pp_degree * planner.virtual_stages, planner.num_microbatches); !s) {
    return Error{"planner settings beyond the planner's limits: " + s.error().message};
  }
  // The schedule's own requirements (interleaved: M a multiple of pp_degree, V >= 2).
  if (auto s = CheckScheduleShape(planner.schedule, info.pp_degree, planner.num_microbatches, planner.virtual_stages);
      !s) {
    return Error{"planner settings: " + s.error().message};
  }
  return Status::Ok();
}

std::string SanitizeMetadata(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool safe =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
  }
  return out;
}

// Leases and deadline schedules must survive a restart: wall-clock time.
double UnixNowS() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

}  // namespace

struct JobRegistry::Job {
  std::mutex mu;
  JobInfo info;
  PlannerSettings planner;
  std::vector<std::optional<RankInfo>> ranks;
  int num_registered = 0;
  std::vector<std::optional<RankProfile>> rank_profiles;
  int num_rank_profiles = 0;
  std::vector<uint8_t> has_result;  // per rank: a ProfilingResult is stored
  int num_results = 0;
  // Rounds.
  RoundBarrier barrier;
  ScheduleDecision decision;  // what the last completed round served
  ProfilingSweep sweep;
  PlanSelection selection;
  Stragglers stragglers;
  std::optional<PowerTarget> power_target;    // PUT /v1/jobs/{id}/power_target
  std::optional<DeadlineFollowing> deadline;  // PUT /v1/jobs/{id}/deadline_schedule
  // Profile and frontier.
  std::string profile_source;
  std::shared_ptr<const Profile> profile;
  // The frequencies the profile's rank aggregation left out (some rank lacked them).
  std::vector<DroppedFrequency> profile_warnings;
  FrontierState frontier_state = FrontierState::kNone;
  std::string frontier_error;
  // Why the stored frontier was not used (shown while it is recomputed and after).
  std::string frontier_note;
  double frontier_seconds = 0;
  uint64_t frontier_generation = 0;
  // Computations started and not finished since the last one that finished (stored).
  int frontier_attempts = 0;
  std::shared_ptr<const Frontier> frontier;
  std::map<size_t, std::shared_ptr<const StageSchedules>> plan_cache;
  std::optional<PipelineSchedule> schedule;  // instruction order, for AllMax/profiling
  // Barrier-free plan delivery (deployment.h).
  Deployment deployment;
  StepProgress progress;
  // The energy the deployed plans saved against AllMax over the reported steps (status page;
  // in memory only: counted again from the first report after a restart).
  EnergySavingTally saving;
  // Set once, before the job is in the registry's map: 1 for the first job registered (or
  // loaded, in the store's order), then 2, ... (the status page shows the newest).
  uint64_t registration_order = 0;
  // The AllMax point of the frontier of generation all_max_generation (computed when first
  // needed).
  std::optional<AllMaxPoint> all_max;
  uint64_t all_max_generation = 0;
  bool deleted = false;

  // Sizes the per-rank state for info.world_size ranks, all empty.
  void SizeRankState() {
    size_t ws = static_cast<size_t>(info.world_size);
    ranks.assign(ws, std::nullopt);
    rank_profiles.assign(ws, std::nullopt);
    has_result.assign(ws, 0);
    barrier.Reset(ws, 0);
    sweep = ProfilingSweep(ws);
    progress = StepProgress(ws);
  }

  JobState State() const {
    return JobState{barrier.completed_rounds(),
                    selection,
                    stragglers,
                    frontier_attempts,
                    sweep.state(),
                    deployment.version,
                    deployment.apply_from_step,
                    progress.steps_per_s(),
                    power_target,
                    deadline ? std::optional<DeadlineScheduleSpec>(deadline->spec) : std::nullopt};
  }

  // Every rank profile received so far, aggregated into one pipeline profile.
  Result<AggregatedProfile> AggregateReceivedRankProfiles() const {
    std::vector<RankProfile> all;
    for (const auto& rp : rank_profiles) {
      if (rp) all.push_back(*rp);
    }
    return AggregateRankProfiles(all, info.pp_degree);
  }

  Status CheckRankAgainstProfile(const RankInfo& rank) const {
    if (!profile || rank.pp_rank >= profile->num_stages()) return Status::Ok();
    std::set<int> declared(rank.available_frequencies.begin(), rank.available_frequencies.end());
    for (int k = 0; k < kNumInstructionKinds; ++k) {
      for (const Measurement& m : profile->measurements(rank.pp_rank, static_cast<InstructionKind>(k))) {
        if (!declared.count(m.freq_mhz)) {
          return Error{"rank " + std::to_string(rank.rank) + " (pp_rank " + std::to_string(rank.pp_rank) +
                       ") did not declare frequency " + std::to_string(m.freq_mhz) +
                       " MHz, which the job's profile uses"};
        }
      }
    }
    return Status::Ok();
  }

  std::shared_ptr<const StageSchedules> PlanSchedules(size_t index) {
    auto it = plan_cache.find(index);
    if (it != plan_cache.end()) return it->second;
    auto schedules = std::make_shared<const StageSchedules>(PlanStageSchedules(*frontier, index));
    if (plan_cache.size() > 16) plan_cache.clear();
    plan_cache[index] = schedules;
    return schedules;
  }

  size_t SelectedPoint() const { return SelectedIndex(*frontier, selection); }

  // The AllMax point of the ready frontier; nullopt without one or when the profile does not
  // give it.
  const std::optional<AllMaxPoint>& AllMax() {
    if (!frontier || !profile) {
      all_max.reset();
      return all_max;
    }
    if (all_max_generation != frontier_generation) {
      all_max = AllMaxReference(*profile, *frontier, planner.virtual_stages);
      all_max_generation = frontier_generation;
    }
    return all_max;
  }

  // What one step of the deployed target saves against AllMax (energy_saving.h).
  double StepSaving() {
    const DeploymentTarget& target = deployment.target;
    if (!target.plan || !frontier || target.frontier_generation != frontier_generation) return 0;
    const auto& reference = AllMax();
    return reference ? StepSavingJ(*frontier, *reference, target, info.dp_degree, info.tp_degree) : 0;
  }

  // The frontier as it stands, with the frontier fields of the job.
  void SetFrontierReady(std::shared_ptr<const Frontier> ready, double seconds) {
    frontier = std::move(ready);
    frontier_state = FrontierState::kReady;
    frontier_seconds = seconds;
    frontier_error.clear();
    plan_cache.clear();
  }
  void SetFrontierFailed(std::string error) {
    frontier_state = FrontierState::kFailed;
    frontier_error = std::move(error);
  }
};

JobRegistry::JobRegistry(JobStore& store, Metrics& metrics, Options options)
    : store_(store), metrics_(metrics), options_(std::move(options)) {
  worker_ = std::make_unique<FrontierWorker>(
      options_.frontier_threads, [this](const FrontierTask& task) { return OnFrontierStarted(task); },
      [this](const FrontierTask& task, Result<Frontier> frontier, double seconds) {
        OnFrontierDone(task, std::move(frontier), seconds);
      });
}

JobRegistry::~JobRegistry() { Shutdown(); }

void JobRegistry::Shutdown() {
  shutting_down_ = true;
  {
    std::shared_lock lock(mu_);
    for (auto& [id, job] : jobs_) {
      std::lock_guard job_lock(job->mu);
      job->barrier.NotifyAll();
    }
  }
  if (worker_) worker_->Stop();
}

void JobRegistry::UpdateGauges() {
  metrics_.SetGauges(num_jobs_.load(), num_ranks_.load());
  metrics_.SetStragglers(num_stragglers_.load());
}

Error JobRegistry::MissingJob(const std::string& job_id) {
  std::shared_lock lock(mu_);
  auto it = quarantined_.find(job_id);
  if (it == quarantined_.end()) return Error::NotFound("unknown job '" + PrintableText(job_id) + "'");
  return Error::Corruption("job '" + PrintableText(job_id) + "' is quarantined: its stored data cannot be read (" +
                           it->second + "); its rows are kept in the store as they are; DELETE /v1/jobs/" +
                           PrintableText(job_id) + " removes them");
}

std::shared_ptr<JobRegistry::Job> JobRegistry::Find(const std::string& job_id) {
  std::shared_lock lock(mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

Result<const RankInfo*> JobRegistry::RegisteredRank(const Job& job, int64_t rank) {
  const std::string& job_id = job.info.job_id;
  if (rank >= job.info.world_size) return RankOutOfRange("job '" + job_id + "': ", rank, job.info.world_size);
  const auto& registered = job.ranks[static_cast<size_t>(rank)];
  if (!registered) {
    return Error::Conflict("job '" + job_id + "': rank " + std::to_string(rank) +
                           " has not registered; POST /register_rank/" + job_id + " first");
  }
  return &*registered;
}

Status JobRegistry::PutStateLocked(const Job& job) {
  return store_.PutState(job.info.job_id, EncodeJobState(job.State()));
}

Result<std::shared_ptr<JobRegistry::Job>> JobRegistry::LoadStoredJob(const StoredJob& s, bool& compute_frontier) {
  compute_frontier = false;
  auto decoded = DecodeStoredJob(s);
  if (!decoded) return decoded.error();
  auto job = std::make_shared<Job>();
  job->info = decoded->info;
  job->planner = decoded->planner;
  job->SizeRankState();
  const size_t ws = static_cast<size_t>(job->info.world_size);
  job->ranks = std::move(decoded->ranks);
  job->rank_profiles = std::move(decoded->rank_profiles);
  job->has_result = std::move(decoded->has_result);
  job->num_registered = static_cast<int>(
      std::count_if(job->ranks.begin(), job->ranks.end(), [](const auto& r) { return r.has_value(); }));
  job->num_rank_profiles = static_cast<int>(
      std::count_if(job->rank_profiles.begin(), job->rank_profiles.end(), [](const auto& p) { return p.has_value(); }));
  job->num_results = static_cast<int>(std::count(job->has_result.begin(), job->has_result.end(), 1));
  const JobState& state = decoded->state;
  job->barrier.Reset(ws, state.completed_rounds);
  job->sweep = ProfilingSweep(state.sweep, ws);
  job->selection = state.selection;
  job->stragglers = state.stragglers;
  job->power_target = state.power_target;
  if (state.deadline_schedule) job->deadline = DeadlineFollowing{*state.deadline_schedule, {}, {}, std::nullopt, {}};
  job->frontier_attempts = state.frontier_attempts;
  job->deployment.version = state.deployment_version;
  job->deployment.apply_from_step = state.deployment_apply_from_step;
  job->progress.set_fallback_steps_per_s(state.deployment_steps_per_s);
  if (s.profile_source.empty() && s.profile_csv.empty()) return job;  // no profile yet

  // The profile, as it was installed (an uploaded CSV, or the aggregate of the rank
  // profiles written with ProfileCsvText, which reads back exactly). The warnings of one
  // built from rank profiles come from aggregating the stored rank profiles again.
  job->profile_source = s.profile_source;
  auto profile = ParseProfileCsvWithWarnings(s.profile_csv, "job " + s.job_id + " profile", job->info.pp_degree);
  if (profile && (s.profile_source == "rank_profiles" || s.profile_source == "server_profiling")) {
    if (auto again = job->AggregateReceivedRankProfiles(); again) profile->dropped = std::move(again->dropped);
  }
  if (!profile) {
    job->SetFrontierFailed("the stored profile cannot be read: " + profile.error().message +
                           "; upload it again (PUT /v1/jobs/{job_id}/profile)");
    return job;
  }
  job->profile = std::make_shared<const Profile>(std::move(profile->profile));
  job->profile_warnings = std::move(profile->dropped);

  // The frontier: the stored one when it reads back and no computation was interrupted
  // since (a POST /frontier the server died in is resumed, under the crash-loop breaker);
  // otherwise computed again.
  if (!s.frontier_text.empty() && job->frontier_attempts == 0) {
    auto frontier = ParseFrontierFile(s.frontier_text, "job " + s.job_id + " stored frontier");
    if (frontier && frontier->num_stages() == job->info.pp_degree) {
      double seconds = 0;
      try {
        seconds = json::parse(s.frontier_summary_json).value("compute_seconds", 0.0);
      } catch (const json::exception&) {
        // The summary is for listings; a frontier without one is still whole.
      }
      ++job->frontier_generation;
      job->SetFrontierReady(std::make_shared<const Frontier>(std::move(*frontier)), seconds);
      return job;
    }
    job->frontier_note = "the stored frontier could not be read (" +
                         (frontier ? std::string("it has the wrong number of stages") : frontier.error().message) +
                         "), so it was computed again";
    std::fprintf(stderr, "wattcut serve: job %s: %s\n", PrintableText(s.job_id).c_str(), job->frontier_note.c_str());
  }
  if (job->frontier_attempts >= kMaxInterruptedFrontierAttempts) {
    job->SetFrontierFailed("the frontier computation was interrupted " + std::to_string(job->frontier_attempts) +
                           " times in a row (the server stopped or crashed while computing it), so it is not "
                           "computed again automatically; POST /v1/jobs/" +
                           s.job_id + "/frontier computes it again");
    return job;
  }
  compute_frontier = true;
  return job;
}

Status JobRegistry::Load() {
  auto stored = store_.LoadAll();
  if (!stored) return stored.error();
  std::vector<std::shared_ptr<Job>> to_plan;  // submitted once every job is findable
  for (StoredJob& s : *stored) {
    bool compute_frontier = false;
    auto job = LoadStoredJob(s, compute_frontier);
    std::string().swap(s.frontier_text);
    if (!job) {
      std::unique_lock lock(mu_);
      quarantined_[s.job_id] = job.error().message;
      continue;
    }
    if (compute_frontier) to_plan.push_back(*job);
    {
      // What the ranks were given before the restart: the stored frontier, selection and
      // stragglers decide it again (no new version); with the frontier still to compute it is
      // AllMax, and the ranks keep the plan they have until the frontier is back.
      Job& loaded = **job;
      std::lock_guard job_lock(loaded.mu);
      // A deadline schedule is computed again from its stored spec first: its cap was in that.
      if (loaded.deadline && loaded.frontier_state == FrontierState::kReady && loaded.frontier) {
        DeadlineFollowing& f = *loaded.deadline;
        f.frontier_generation = loaded.frontier_generation;
        if (Status computed = ComputeDeadline(f, *loaded.frontier, loaded.info, UnixNowS()); !computed) {
          f.error = computed.error().message;
        }
      }
      loaded.deployment.target =
          DeploymentTarget::From(Decide(loaded, /*may_start_profiling=*/false), loaded.frontier_generation);
    }
    num_ranks_ += (*job)->num_registered;
    num_stragglers_ += static_cast<int64_t>((*job)->stragglers.size());
    std::unique_lock lock(mu_);
    (*job)->registration_order = ++last_registration_order_;
    jobs_[s.job_id] = std::move(*job);
    ++num_jobs_;
  }
  for (const auto& job : to_plan) {
    std::lock_guard lock(job->mu);
    SubmitFrontierLocked(*job);
  }
  UpdateGauges();
  return Status::Ok();
}

std::vector<QuarantinedJob> JobRegistry::quarantined_jobs() {
  std::shared_lock lock(mu_);
  std::vector<QuarantinedJob> out;
  for (const auto& [id, error] : quarantined_) out.push_back({id, error});
  return out;
}

Answer JobRegistry::RegisterJob(const JobRegistration& registration) {
  auto job = std::make_shared<Job>();
  job->info = registration.info;
  job->planner = registration.planner.value_or(options_.default_planner);
  if (auto s = CheckPipelineLimits(job->info, job->planner); !s) return s.error();
  job->SizeRankState();

  JobInfo info = job->info;
  auto make_id = [&info](int64_t seq) {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
    std::string id = std::string(stamp) + "+dp" + std::to_string(info.dp_degree) + "+pp" +
                     std::to_string(info.pp_degree) + "+tp" + std::to_string(info.tp_degree) + "+perseus+" +
                     std::to_string(seq);
    if (info.job_metadata && !info.job_metadata->empty()) id += "+" + SanitizeMetadata(*info.job_metadata);
    return id;
  };
  json stored_info = ToJson(job->info);
  stored_info.erase("job_id");
  // A start-up profile for this pipeline depth and these settings: the job has its profile
  // and frontier from the start, so its first round, and its first deployment, serve the plan.
  const std::shared_ptr<const StartupProfile> startup =
      MatchStartupProfile(options_.startup_profiles, job->info.pp_degree, job->planner);
  std::optional<JobStore::InitialProfile> initial;
  if (startup) {
    initial = JobStore::InitialProfile{startup->csv, startup->source(), startup->frontier_text,
                                       Text(FrontierSummaryJson(*startup->frontier, startup->compute_seconds))};
    job->profile = startup->profile;
    job->profile_source = startup->source();
    job->profile_warnings = startup->warnings;
    ++job->frontier_generation;
    job->SetFrontierReady(startup->frontier, startup->compute_seconds);
    // Deployment 1, stored with the job: no rank has run a step yet, so it applies from step 0.
    job->deployment.target =
        DeploymentTarget::From(Decide(*job, /*may_start_profiling=*/false), job->frontier_generation);
    job->deployment.version = 1;
    job->deployment.apply_from_step = 0;
  }
  auto id = store_.CreateJob(make_id, stored_info.dump(), ToJson(job->planner).dump(), EncodeJobState(job->State()),
                             initial ? &*initial : nullptr);
  if (!id) return StoreFailed(id.error());
  job->info.job_id = *id;
  {
    std::unique_lock lock(mu_);
    job->registration_order = ++last_registration_order_;
    jobs_[*id] = job;
    ++num_jobs_;
  }
  UpdateGauges();
  // Zeus returns the job id as a bare JSON string.
  return Text(json(*id));
}

Answer JobRegistry::RegisterRank(const std::string& job_id, const RankInfo& info) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  const JobInfo& j = job->info;
  auto range = [](const char* name, int value, int limit) -> std::optional<std::string> {
    if (value < limit) return std::nullopt;
    return std::string(name) + " " + std::to_string(value) + " is out of range [0, " + std::to_string(limit) + ")";
  };
  for (auto problem : {range("rank", info.rank, j.world_size), range("dp_rank", info.dp_rank, j.dp_degree),
                       range("pp_rank", info.pp_rank, j.pp_degree), range("tp_rank", info.tp_rank, j.tp_degree)}) {
    if (problem) return Error{"job '" + job_id + "': " + *problem};
  }
  if (job->ranks[static_cast<size_t>(info.rank)]) {
    return Error::Conflict("job '" + job_id + "': rank " + std::to_string(info.rank) + " is already registered");
  }
  for (const auto& other : job->ranks) {
    if (other && other->dp_rank == info.dp_rank && other->pp_rank == info.pp_rank && other->tp_rank == info.tp_rank) {
      return Error::Conflict("job '" + job_id + "': (dp_rank, pp_rank, tp_rank) = (" + std::to_string(info.dp_rank) +
                             ", " + std::to_string(info.pp_rank) + ", " + std::to_string(info.tp_rank) +
                             ") is already registered by rank " + std::to_string(other->rank));
    }
  }
  if (auto s = job->CheckRankAgainstProfile(info); !s) return Error{"job '" + job_id + "': " + s.error().message};
  if (auto s = store_.PutRank(job_id, info.rank, ToJson(info).dump()); !s) return StoreFailed(s.error());
  job->ranks[static_cast<size_t>(info.rank)] = info;
  ++job->num_registered;
  ++num_ranks_;
  UpdateGauges();
  return Text(nullptr);
}

ScheduleDecision JobRegistry::Decide(Job& job, bool may_start_profiling) {
  ScheduleInputs in;
  in.job_id = job.info.job_id;
  in.frontier_state = job.frontier_state;
  in.frontier = job.frontier.get();
  in.selection = job.selection;
  in.stragglers = job.stragglers;
  in.num_microbatches = job.planner.num_microbatches;
  in.has_profile = job.profile != nullptr;
  in.sweep = job.sweep.state();
  in.profiling_min_freq_mhz = job.planner.profiling_min_freq_mhz;
  in.may_start_profiling = may_start_profiling;
  if (job.frontier_state != FrontierState::kReady && job.planner.num_microbatches >= 1 && !job.schedule) {
    auto schedule = BuildPipelineSchedule(job.planner.schedule, job.info.pp_degree, job.planner.num_microbatches,
                                          job.planner.virtual_stages);
    if (schedule) {
      job.schedule = std::move(*schedule);
    } else {
      in.schedule_error = schedule.error().message;
    }
  }
  if (!job.sweep.active() && may_start_profiling) {
    for (const auto& r : job.ranks) {
      if (r) in.declared_freqs_mhz.push_back(r->available_frequencies);
    }
  }
  ScheduleDecision d = DecideSchedule(in);
  if (!d.start_sweep_freqs_mhz.empty()) job.sweep.Start(d.start_sweep_freqs_mhz);
  // A power target holds every pipeline (stragglers too) to its point.
  if (d.mode == ScheduleDecision::Mode::kPlan && job.power_target && job.frontier) {
    CapDecision(d, PointForPowerTarget(*job.frontier, *job.power_target).index);
  }
  // A deadline schedule holds them to its point of the moment the same way.
  if (d.mode == ScheduleDecision::Mode::kPlan && job.deadline && job.frontier &&
      job.deadline->frontier_generation == job.frontier_generation) {
    if (const std::optional<size_t> cap = DeadlineCap(*job.deadline, UnixNowS())) CapDecision(d, *cap);
  }
  return d;
}

namespace {
// GET /v1/jobs/{id}/power_target's answer (defined with the power-target endpoints below).
json PowerTargetJson(const std::string& job_id, const std::optional<PowerTarget>& target, FrontierState frontier_state,
                     const Frontier* frontier, size_t selected, const Deployment& deployment,
                     const StepProgress& progress, bool* met_out, double* point_power_out);
}  // namespace

void JobRegistry::LapsePowerTargetLocked(Job& job) {
  if (!job.power_target || job.power_target->lease_s <= 0) return;
  if (UnixNowS() < job.power_target->expires_at_unix_s) return;
  const std::optional<PowerTarget> saved = job.power_target;
  job.power_target.reset();
  if (auto s = PutStateLocked(job); !s) {
    // Kept as stored; the next read tries again.
    job.power_target = saved;
    return;
  }
  RedeployLocked(job);
  std::fprintf(stderr, "wattcut serve: job %s: power target's lease (%s s) ran out: cleared, deployment version %llu\n",
               PrintableText(job.info.job_id).c_str(), GeneralText(saved->lease_s).c_str(),
               static_cast<unsigned long long>(job.deployment.version));
}

void JobRegistry::FollowDeadlineLocked(Job& job) {
  if (!job.deadline || job.frontier_state != FrontierState::kReady || !job.frontier) return;
  DeadlineFollowing& f = *job.deadline;
  const double now = UnixNowS();
  if (f.frontier_generation != job.frontier_generation) {
    // After a restart, or on a new frontier: computed again from the stored spec.
    f.frontier_generation = job.frontier_generation;
    f.schedule.reset();
    f.request.reset();
    if (Status s = ComputeDeadline(f, *job.frontier, job.info, now); !s) f.error = s.error().message;
  }
  // Every rank has reported since the server started: the job's step is known.
  if (f.schedule && job.progress.min_step() && DeadlineNeedsReplan(f, job.progress.max_step(), now)) {
    DeadlineFollowing next{ReplanSpec(f, job.progress.max_step(), now), {}, {}, job.frontier_generation, {}};
    const double done = static_cast<double>(job.progress.max_step() - f.spec.from_step);
    const double expected = deadline::IterationsDoneBy(*f.schedule, now);
    if (Status s = ComputeDeadline(next, *job.frontier, job.info, now); !s) {
      // The job stays uncapped until a new PUT: the deadline cannot be met from here.
      next.schedule.reset();
      next.request.reset();
      next.error = "replan " + std::to_string(next.spec.replans) + " at step " +
                   std::to_string(job.progress.max_step()) + ": " + s.error().message;
    }
    const DeadlineFollowing saved = f;
    f = std::move(next);
    if (auto s = PutStateLocked(job); !s) {
      f = saved;  // kept as stored; the next poll tries again
      return;
    }
    std::fprintf(stderr, "wattcut serve: job %s: deadline schedule replanned (%s done, %s expected by now): %s\n",
                 PrintableText(job.info.job_id).c_str(), GeneralText(done).c_str(), GeneralText(expected).c_str(),
                 f.error.empty() ? "following the new schedule" : f.error.c_str());
  }
  RedeployLocked(job);
}

void JobRegistry::RedeployLocked(Job& job) {
  DeploymentTarget target = DeploymentTarget::From(Decide(job, /*may_start_profiling=*/false), job.frontier_generation);
  if (target == job.deployment.target) return;
  // A frontier that is not ready yet leaves the ranks on the plan they have.
  if (!target.plan && job.frontier_state == FrontierState::kComputing) return;
  job.deployment.target = std::move(target);
  ++job.deployment.version;
  metrics_.RecordPlanSwitch();
  job.deployment.apply_from_step = job.progress.ApplyStep(DeploymentLeadS(job.info.world_size));
  // Bookkeeping like the round number: if this write fails the ranks still get the new
  // version (they compare versions for equality, so a lower stored one after a restart is
  // also a change).
  (void)PutStateLocked(job);
}

Answer JobRegistry::FetchDeployment(const std::string& job_id, int64_t rank, int64_t step, uint64_t version) {
  if (Status s = CheckTrainingStep(step, "query parameter 'step'"); !s) return s.error();
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  auto found = RegisteredRank(*job, rank);
  if (!found) return found.error();
  const RankInfo* registered = *found;
  if (shutting_down_) return Error::Unavailable("the server is shutting down");
  job->progress.Report(static_cast<size_t>(rank), step, SteadyNowS());
  LapsePowerTargetLocked(*job);
  FollowDeadlineLocked(*job);
  job->saving.Advance(job->progress.max_step(), job->StepSaving(), job->deployment.target.plan,
                      job->deployment.apply_from_step);
  const Deployment& d = job->deployment;
  const std::string head = "{\"version\":" + std::to_string(d.version) +
                           ",\"poll_interval_s\":" + Text(json(DeploymentPollIntervalS(job->info.world_size)));
  if (version == d.version) return head + "}";
  std::string body = head + ",\"apply_from_step\":" + std::to_string(d.apply_from_step);
  if (d.target.plan && job->frontier) {
    const size_t index = d.target.PlanIndexFor(registered->dp_rank);
    auto plans = job->PlanSchedules(index);
    return body + ",\"mode\":\"plan\",\"plan_index\":" + std::to_string(index) +
           ",\"frequencies\":" + (*plans)[static_cast<size_t>(registered->pp_rank)] + "}";
  }
  // AllMax: the rank's instructions in order, at its highest declared clock.
  ScheduleDecision all_max = Decide(*job, /*may_start_profiling=*/false);
  if (all_max.mode == ScheduleDecision::Mode::kError) return all_max.error;
  if (!job->schedule) return Error::Conflict("job '" + job_id + "': its instruction order is not known yet");
  const int freq =
      *std::max_element(registered->available_frequencies.begin(), registered->available_frequencies.end());
  return body + ",\"mode\":\"all_max\",\"frequencies\":" +
         UniformStageSchedule((*job->schedule)[static_cast<size_t>(registered->pp_rank)], freq) + "}";
}

Answer JobRegistry::ScheduleAnswer(Job& job, const ScheduleDecision& d, int rank) {
  const RankInfo& info = *job.ranks[static_cast<size_t>(rank)];
  switch (d.mode) {
    case ScheduleDecision::Mode::kError:
      return d.error;
    case ScheduleDecision::Mode::kPlan: {
      auto plans = job.PlanSchedules(d.PlanIndexFor(info.dp_rank));
      return FrequencyScheduleJson(rank, (*plans)[static_cast<size_t>(info.pp_rank)]);
    }
    case ScheduleDecision::Mode::kAllMax:
    case ScheduleDecision::Mode::kProfiling: {
      int freq = d.mode == ScheduleDecision::Mode::kProfiling
                     ? d.profiling_freq_mhz
                     : *std::max_element(info.available_frequencies.begin(), info.available_frequencies.end());
      return FrequencyScheduleJson(rank,
                                   UniformStageSchedule((*job.schedule)[static_cast<size_t>(info.pp_rank)], freq));
    }
  }
  return d.error;
}

void JobRegistry::CompleteRound(Job& job) {
  LapsePowerTargetLocked(job);
  job.decision = Decide(job, /*may_start_profiling=*/true);
  job.barrier.Complete();
  // The round number is bookkeeping, not an acknowledged write: if this fails, the
  // ranks are still answered and the next successful write catches up.
  (void)PutStateLocked(job);
}

Answer JobRegistry::FetchSchedule(const std::string& job_id, int64_t rank) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::unique_lock lock(job->mu);
  if (auto found = RegisteredRank(*job, rank); !found) return found.error();
  size_t r = static_cast<size_t>(rank);
  RoundBarrier& barrier = job->barrier;
  if (barrier.is_waiting(r)) {
    return Error::Conflict("job '" + job_id + "': rank " + std::to_string(rank) +
                           " is already waiting for the schedule of round " +
                           std::to_string(barrier.completed_rounds() + 1));
  }
  if (shutting_down_) return Error::Unavailable("the server is shutting down");
  const int64_t joined_after = barrier.completed_rounds();
  if (barrier.Join(r)) {
    CompleteRound(*job);
    return ScheduleAnswer(*job, job->decision, static_cast<int>(rank));
  }
  if (metrics_.long_polls_waiting().fetch_add(1) >= options_.max_long_polls) {
    metrics_.long_polls_waiting().fetch_sub(1);
    barrier.Leave(r);
    return Error::Unavailable("too many schedule long polls are waiting (limit " +
                              std::to_string(options_.max_long_polls) + ", --max-long-polls); retry later");
  }
  const bool served = barrier.Wait(lock, joined_after, options_.long_poll_timeout,
                                   [&] { return job->deleted || shutting_down_.load(); });
  metrics_.long_polls_waiting().fetch_sub(1);
  if (job->deleted) return Error::Aborted("job '" + job_id + "' was deleted while rank waited");
  if (!served) {
    barrier.Leave(r);
    if (shutting_down_) return Error::Unavailable("the server is shutting down");
    std::string missing;
    for (size_t i : barrier.RanksNotWaiting(r, 16)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    return Error::DeadlineExceeded("job '" + job_id + "': timed out after " +
                                   std::to_string(options_.long_poll_timeout.count()) +
                                   " ms waiting for every rank to ask for round " + std::to_string(joined_after + 1) +
                                   "; ranks not asking include: " + missing);
  }
  return ScheduleAnswer(*job, job->decision, static_cast<int>(rank));
}

Status JobRegistry::RecordProfilingResultLocked(Job& job, const ProfilingResult& result) {
  const size_t r = static_cast<size_t>(result.rank);
  const std::optional<int> freq = job.sweep.current_freq_mhz();
  if (!freq || job.decision.mode != ScheduleDecision::Mode::kProfiling || job.sweep.has_reported(r)) {
    return Status::Ok();  // not a sweep step's result: stored, nothing more
  }
  // Zeus's default ProfilingResult (no breakdowns) measures no computation: stored, and the
  // step waits for this rank's result with breakdowns.
  if (!ProfilingSweep::HasBreakdowns(result)) return Status::Ok();
  auto measured = ProfilingSweep::MeasurementOf(result, *freq);
  if (!measured) return measured.error();
  const RankInfo& info = *job.ranks[r];
  RankProfile p = job.rank_profiles[r].value_or(RankProfile{});
  p.rank = info.rank;
  p.dp_rank = info.dp_rank;
  p.pp_rank = info.pp_rank;
  p.tp_rank = info.tp_rank;
  measured->RecordInto(p, *freq);  // a zero-bubble rank's B and W as measured
  const ProfilingSweep saved = job.sweep;
  job.sweep.Record(r);
  if (auto s =
          store_.PutRankProfileAndState(job.info.job_id, result.rank, ToJson(p).dump(), EncodeJobState(job.State()));
      !s) {
    job.sweep = saved;
    return StoreFailed(s.error());
  }
  if (!job.rank_profiles[r]) ++job.num_rank_profiles;
  job.rank_profiles[r] = std::move(p);
  if (job.sweep.done()) {
    // The result itself is stored; a profile that cannot be built shows as the failed frontier.
    if (auto s = InstallRankProfilesLocked(job, "server_profiling"); !s) job.SetFrontierFailed(s.error().message);
  }
  return Status::Ok();
}

Answer JobRegistry::PostResult(const std::string& job_id, const ProfilingResult& result) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (result.rank >= job->info.world_size) {
    return RankOutOfRange("job '" + job_id + "': ", result.rank, job->info.world_size);
  }
  if (!job->ranks[static_cast<size_t>(result.rank)]) {
    return Error::Conflict("job '" + job_id + "': rank " + std::to_string(result.rank) + " has not registered");
  }
  if (auto s = store_.PutResult(job_id, result.rank, ToJson(result).dump()); !s) return StoreFailed(s.error());
  if (!job->has_result[static_cast<size_t>(result.rank)]) {
    job->has_result[static_cast<size_t>(result.rank)] = 1;
    ++job->num_results;
  }
  if (auto s = RecordProfilingResultLocked(*job, result); !s) return s.error();
  return Text(nullptr);
}

Answer JobRegistry::ListJobs() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::shared_lock lock(mu_);
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  json out = json::array();
  for (const auto& job : jobs) {
    std::lock_guard lock(job->mu);
    json entry = ToJson(job->info);
    entry["ranks_registered"] = job->num_registered;
    entry["round"] = job->barrier.completed_rounds();
    entry["frontier"] = FrontierStateName(job->frontier_state);
    out.push_back(entry);
  }
  json quarantined = json::array();
  for (const QuarantinedJob& q : quarantined_jobs()) {
    quarantined.push_back({{"job_id", q.job_id}, {"error", q.error}});
  }
  return Text(json{{"jobs", out}, {"quarantined", quarantined}});
}

namespace {

// The frontier as the status page draws it: at most kStatusChartMaxPoints evenly spaced
// points, both ends kept, and the marked ones.
StatusFrontierView StatusFrontier(const Frontier& frontier, size_t selected, double compute_seconds) {
  const auto& points = frontier.points();
  auto point = [&points](size_t i) { return StatusPoint{i, points[i].time_s, points[i].energy_j}; };
  StatusFrontierView view;
  view.num_points = points.size();
  const size_t shown = std::min(points.size(), kStatusChartMaxPoints);
  for (size_t k = 0; k < shown; ++k) {
    view.curve.push_back(point(shown == 1 ? 0 : k * (points.size() - 1) / (shown - 1)));
  }
  view.fastest = point(frontier.fastest_index());
  view.min_energy = point(frontier.min_energy_index());
  view.selected = point(selected);
  view.compute_seconds = compute_seconds;
  return view;
}

}  // namespace

JobStateCounts JobRegistry::CountJobStates() {
  JobStateCounts counts;
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::shared_lock lock(mu_);
    counts.quarantined = static_cast<int64_t>(quarantined_.size());
    jobs.reserve(jobs_.size());
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  for (const auto& job : jobs) {
    std::lock_guard lock(job->mu);
    ++counts.by_frontier_state[static_cast<size_t>(job->frontier_state)];
  }
  return counts;
}

void JobRegistry::FillStatusView(ServerStatusView& view, size_t max_jobs) {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::shared_lock lock(mu_);
    view.num_jobs = jobs_.size();
    view.num_quarantined = quarantined_.size();
    jobs.reserve(jobs_.size());
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  // The newest first (registration_order never changes once the job is in the map).
  const auto newer = [](const auto& a, const auto& b) { return a->registration_order > b->registration_order; };
  const size_t shown = std::min(max_jobs, jobs.size());
  std::partial_sort(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(shown), jobs.end(), newer);
  jobs.resize(shown);
  for (const auto& job : jobs) {
    std::lock_guard lock(job->mu);
    JobStatusView v;
    v.job_id = job->info.job_id;
    v.name = job->info.job_metadata;
    v.pp_degree = job->info.pp_degree;
    v.dp_degree = job->info.dp_degree;
    v.tp_degree = job->info.tp_degree;
    v.world_size = job->info.world_size;
    v.ranks_registered = job->num_registered;
    v.rounds = job->barrier.completed_rounds();
    v.num_microbatches = job->planner.num_microbatches;
    v.schedule = job->planner.schedule;
    v.virtual_stages = job->planner.virtual_stages;
    v.frontier_state = job->frontier_state;
    v.frontier_error = job->frontier_error;
    v.profile_source = job->profile_source;
    if (job->sweep.active()) v.profiling_freq_mhz = job->sweep.current_freq_mhz();
    v.deployment_version = job->deployment.version;
    v.deployment_mode = job->deployment.version == 0 ? "none" : job->deployment.target.plan ? "plan" : "all_max";
    v.job_step = job->progress.max_step();
    for (const auto& [dp, s] : job->stragglers) v.stragglers.push_back({dp, s.kind, s.value});
    if (job->frontier_state == FrontierState::kReady && job->frontier) {
      const Frontier& frontier = *job->frontier;
      const size_t selected = job->SelectedPoint();
      v.frontier = StatusFrontier(frontier, selected, job->frontier_seconds);
      if (!job->stragglers.empty()) {
        v.straggler_time_s = StragglerIterationTime(frontier, selected, job->stragglers);
        const size_t i = frontier.IndexForIterationTime(v.straggler_time_s);
        v.frontier->non_straggler = StatusPoint{i, frontier.points()[i].time_s, frontier.points()[i].energy_j};
      }
      if (const auto& all_max = job->AllMax()) {
        v.frontier->all_max_time_s = all_max->time_s;
        v.frontier->all_max_energy_j = all_max->energy_j;
      }
    }
    v.saving.all_max_known = job->AllMax().has_value();
    v.saving.started = job->saving.started();
    v.saving.counted_steps = job->saving.counted_steps();
    v.saving.plan_steps = job->saving.plan_steps();
    v.saving.saved_j = job->saving.saved_j();
    v.saving.step_saving_j = job->StepSaving();
    LapsePowerTargetLocked(*job);
    if (const auto& target = job->power_target) {
      const bool ready = job->frontier_state == FrontierState::kReady && job->frontier;
      const json answer =
          PowerTargetJson(job->info.job_id, target, job->frontier_state, ready ? job->frontier.get() : nullptr,
                          ready ? job->SelectedPoint() : 0, job->deployment, job->progress, nullptr, nullptr);
      StatusPowerTargetView t;
      t.kind = target->KindName();
      t.target_per_gpu_w = target->per_gpu_w;
      t.reason = target->reason;
      t.applied = answer.value("applied", false);
      if (t.applied) {
        t.point = answer["point"]["index"].get<size_t>();
        t.point_per_gpu_w = answer["point_power_per_gpu_w"].get<double>();
        t.met = answer.value("met", false);
      }
      v.power_target = t;
    }
    if (job->deadline) v.deadline = DeadlineStatus(*job->deadline, job->progress.max_step(), UnixNowS());
    view.jobs.push_back(std::move(v));
  }
}

Answer JobRegistry::GetJob(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  json out = {{"job", ToJson(job->info)},
              {"planner", ToJson(job->planner)},
              {"ranks_registered", job->num_registered},
              {"rank_profiles", job->num_rank_profiles},
              {"ranks_with_results", job->num_results},
              {"round", job->barrier.completed_rounds()},
              {"ranks_waiting", job->barrier.num_waiting()},
              {"profile_source", job->profile_source.empty() ? json(nullptr) : json(job->profile_source)},
              {"profile_warnings", ProfileWarningsJson(job->profile_warnings)},
              {"frontier", FrontierStateName(job->frontier_state)},
              {"selection", job->selection.ToJson()},
              {"state", json::parse(EncodeJobState(job->State()))}};
  return Text(out);
}

Answer JobRegistry::DeleteJob(const std::string& job_id) {
  std::shared_ptr<Job> job;
  {
    std::unique_lock lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      if (quarantined_.count(job_id) == 0) return Error::NotFound("unknown job '" + PrintableText(job_id) + "'");
      if (auto s = store_.DeleteJob(job_id); !s) return StoreFailed(s.error());
      quarantined_.erase(job_id);
      return Text(json{{"deleted", job_id}});
    }
    job = it->second;
    if (auto s = store_.DeleteJob(job_id); !s) return StoreFailed(s.error());
    jobs_.erase(it);
    --num_jobs_;
  }
  {
    std::lock_guard lock(job->mu);
    job->deleted = true;
    ++job->frontier_generation;
    num_ranks_ -= job->num_registered;
    num_stragglers_ -= static_cast<int64_t>(job->stragglers.size());
    job->barrier.NotifyAll();
  }
  UpdateGauges();
  return Text(json{{"deleted", job_id}});
}

void JobRegistry::SubmitFrontierLocked(Job& job) {
  ++job.frontier_generation;
  job.frontier_state = FrontierState::kComputing;
  job.frontier_error.clear();
  job.frontier.reset();
  job.plan_cache.clear();
  if (job.planner.num_microbatches < 1) {
    job.SetFrontierFailed("num_microbatches is not set; PUT /v1/jobs/{job_id}/planner");
    return;
  }
  worker_->Submit(FrontierTask{job.info.job_id, job.frontier_generation, job.profile, job.planner.ToPlannerOptions()});
}

Status JobRegistry::InstallProfileLocked(Job& job, AggregatedProfile profile, const std::string& stored_csv,
                                         const std::string& source) {
  if (profile.profile.num_stages() != job.info.pp_degree) {
    return Error{"the profile has " + std::to_string(profile.profile.num_stages()) +
                 " stages but the job's pp_degree is " + std::to_string(job.info.pp_degree)};
  }
  std::shared_ptr<const Profile> previous = job.profile;
  job.profile = std::make_shared<const Profile>(std::move(profile.profile));
  for (const auto& r : job.ranks) {
    if (!r) continue;
    if (auto s = job.CheckRankAgainstProfile(*r); !s) {
      job.profile = previous;
      return s;
    }
  }
  if (auto s = store_.PutProfile(job.info.job_id, stored_csv, source, ToJson(job.planner).dump()); !s) {
    job.profile = previous;
    return StoreFailed(s.error());
  }
  job.profile_source = source;
  job.profile_warnings = std::move(profile.dropped);
  job.frontier_note.clear();
  SubmitFrontierLocked(job);
  return Status::Ok();
}

Status JobRegistry::InstallRankProfilesLocked(Job& job, const std::string& source) {
  auto aggregated = job.AggregateReceivedRankProfiles();
  if (!aggregated) return aggregated.error();
  const std::string stored = ProfileCsvText(aggregated->profile);
  return InstallProfileLocked(job, std::move(*aggregated), stored, source);
}

namespace {
std::string ComputingText(const std::string& job_id, const std::string& source) {
  return Text(json{{"job_id", job_id}, {"frontier", "computing"}, {"profile_source", source}});
}
}  // namespace

Answer JobRegistry::SetPlanner(const std::string& job_id, const PlannerSettings& planner) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (auto s = CheckPipelineLimits(job->info, planner); !s) return s.error();
  if (auto s = store_.PutPlanner(job_id, ToJson(planner).dump()); !s) return StoreFailed(s.error());
  job->planner = planner;
  job->schedule.reset();
  if (job->profile) SubmitFrontierLocked(*job);
  return Text(json{{"planner", ToJson(planner)}, {"frontier", FrontierStateName(job->frontier_state)}});
}

Answer JobRegistry::UploadProfile(const std::string& job_id, const ProfileUpload& upload) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (upload.planner) {
    if (auto s = CheckPipelineLimits(job->info, *upload.planner); !s) return s.error();
  }
  auto read = ParseProfileCsvWithWarnings(upload.csv, "job " + job->info.job_id + " profile", job->info.pp_degree);
  if (!read) return read.error();
  const PlannerSettings saved = job->planner;
  if (upload.planner) {
    job->planner = *upload.planner;
    job->schedule.reset();
  }
  if (auto s = InstallProfileLocked(*job, std::move(*read), upload.csv, "csv"); !s) {
    job->planner = saved;
    return s.error();
  }
  return ComputingText(job->info.job_id, "csv");
}

Answer JobRegistry::UploadRankProfile(const std::string& job_id, const RankProfile& profile) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (profile.rank >= job->info.world_size) {
    return RankOutOfRange("job '" + job_id + "': ", profile.rank, job->info.world_size);
  }
  const auto& registered = job->ranks[static_cast<size_t>(profile.rank)];
  if (!registered) {
    return Error::Conflict("job '" + job_id + "': rank " + std::to_string(profile.rank) +
                           " has not registered; register it before uploading its profile");
  }
  if (registered->dp_rank != profile.dp_rank || registered->pp_rank != profile.pp_rank ||
      registered->tp_rank != profile.tp_rank) {
    return Error{"rank " + std::to_string(profile.rank) + ": dp/pp/tp ranks differ from the ones it registered with"};
  }
  std::set<int> declared(registered->available_frequencies.begin(), registered->available_frequencies.end());
  for (const auto* m : {&profile.forward_time, &profile.backward_time}) {
    for (const auto& [f, v] : *m) {
      if (!declared.count(f)) {
        return Error{"rank " + std::to_string(profile.rank) + ": frequency " + std::to_string(f) +
                     " MHz is not one the rank declared"};
      }
    }
  }
  if (auto s = store_.PutRankProfile(job_id, profile.rank, ToJson(profile).dump()); !s) return StoreFailed(s.error());
  auto& slot = job->rank_profiles[static_cast<size_t>(profile.rank)];
  if (!slot) ++job->num_rank_profiles;
  slot = profile;
  json out = {{"rank_profiles", job->num_rank_profiles}, {"world_size", job->info.world_size}};
  if (job->num_rank_profiles == job->info.world_size) {
    if (auto s = InstallRankProfilesLocked(*job, "rank_profiles"); !s) return s.error();
    out["frontier"] = "computing";
    out["profile_warnings"] = ProfileWarningsJson(job->profile_warnings);
  }
  return Text(out);
}

Answer JobRegistry::ComputeFrontierNow(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (job->profile) {
    SubmitFrontierLocked(*job);
    return Text(json{{"frontier", "computing"}});
  }
  if (job->num_rank_profiles == 0) {
    return Error::Conflict("job '" + job_id +
                           "' has no profile: upload one (PUT /v1/jobs/{job_id}/profile or POST "
                           "/v1/jobs/{job_id}/rank_profiles)");
  }
  if (auto s = InstallRankProfilesLocked(*job, "rank_profiles"); !s) return s.error();
  return ComputingText(job->info.job_id, "rank_profiles");
}

bool JobRegistry::OnFrontierStarted(const FrontierTask& task) {
  auto job = Find(task.job_id);
  if (!job) return false;
  std::lock_guard lock(job->mu);
  if (job->frontier_generation != task.generation || job->deleted) return false;
  // Written before the work: if the planner takes the process down, the next start knows.
  ++job->frontier_attempts;
  (void)PutStateLocked(*job);
  return true;
}

void JobRegistry::OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier, double seconds) {
  metrics_.RecordFrontier(frontier.ok(), seconds);
  // The stored form is written before taking the job's lock: tens of MB for a large frontier.
  std::shared_ptr<const Frontier> ready;
  std::string stored_text;
  if (frontier && !frontier->points().empty()) {
    ready = std::make_shared<const Frontier>(std::move(*frontier));
    stored_text = FrontierFileText(*ready);
  }
  auto job = Find(task.job_id);
  if (!job) return;
  std::lock_guard lock(job->mu);
  if (job->deleted) return;
  // The computation ended (either way): the interrupted ones before it were not in a row.
  if (job->frontier_attempts != 0) {
    job->frontier_attempts = 0;
    (void)PutStateLocked(*job);
  }
  if (job->frontier_generation != task.generation) return;
  if (!frontier) {
    job->frontier_seconds = seconds;
    job->SetFrontierFailed(frontier.error().message);
    (void)store_.PutFrontierSummary(task.job_id, Text(json{{"error", job->frontier_error}}));
    RedeployLocked(*job);
    return;
  }
  if (!ready) {
    job->SetFrontierFailed("the planner returned an empty frontier");
    return;
  }
  job->SetFrontierReady(ready, seconds);
  // Stored so that a restart serves it at once. A frontier that cannot be stored is still
  // served; the next start computes it again.
  if (auto s = store_.PutFrontier(task.job_id, stored_text, Text(FrontierSummaryJson(*ready, seconds))); !s) {
    std::fprintf(stderr,
                 "wattcut serve: job %s: the frontier could not be stored (%s); it is served, and computed "
                 "again after a restart\n",
                 PrintableText(task.job_id).c_str(), s.error().message.c_str());
  }
  RedeployLocked(*job);
}

Answer JobRegistry::FrontierStatus(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  const bool ready = job->frontier_state == FrontierState::kReady;
  return Text(FrontierStatusJson(job->frontier_state, ready ? job->frontier.get() : nullptr,
                                 ready ? job->SelectedPoint() : 0, job->frontier_seconds, job->frontier_error,
                                 job->frontier_note));
}

Answer JobRegistry::FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (job->frontier_state != FrontierState::kReady) {
    return Error::Conflict(
        "job '" + job_id + "': the frontier is " + FrontierStateName(job->frontier_state) +
        (job->frontier_state == FrontierState::kFailed ? ": " + job->frontier_error : std::string()));
  }
  return Text(FrontierPointsJson(*job->frontier, offset, limit));
}

Answer JobRegistry::SelectPlan(const std::string& job_id, const PlanSelection& selection) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (selection.kind == PlanSelection::Kind::kIndex && job->frontier &&
      static_cast<size_t>(selection.value) >= job->frontier->points().size()) {
    return Error{"index " + std::to_string(static_cast<int64_t>(selection.value)) + " is out of range [0, " +
                 std::to_string(job->frontier->points().size()) + ")"};
  }
  const PlanSelection saved = job->selection;
  job->selection = selection;
  if (auto s = PutStateLocked(*job); !s) {
    job->selection = saved;
    return StoreFailed(s.error());
  }
  RedeployLocked(*job);
  json out = {{"selection", selection.ToJson()}};
  if (job->frontier) {
    size_t i = job->SelectedPoint();
    out["index"] = i;
    out["time_s"] = job->frontier->points()[i].time_s;
    out["energy_j"] = job->frontier->points()[i].energy_j;
  }
  return Text(out);
}

Answer JobRegistry::ListStragglers(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  json reply = {{"stragglers", StragglersJson(job->stragglers)}};
  if (job->frontier && !job->stragglers.empty()) {
    double t = StragglerIterationTime(*job->frontier, job->SelectedPoint(), job->stragglers);
    reply["iteration_time_s"] = t;
    reply["non_straggler_index"] = job->frontier->IndexForIterationTime(t);
  }
  return Text(reply);
}

Answer JobRegistry::ReportStraggler(const std::string& job_id, const StragglerReport& report) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  {
    std::lock_guard lock(job->mu);
    if (report.dp_rank >= job->info.dp_degree) {
      return Error{"dp_rank " + std::to_string(report.dp_rank) + " is out of range [0, " +
                   std::to_string(job->info.dp_degree) + ")"};
    }
    const Stragglers saved = job->stragglers;
    if (report.kind == StragglerReport::Kind::kRecovered) {
      job->stragglers.erase(report.dp_rank);
    } else {
      job->stragglers[report.dp_rank] = Straggler{report.kind, report.value};
    }
    if (auto s = PutStateLocked(*job); !s) {
      job->stragglers = saved;
      return StoreFailed(s.error());
    }
    num_stragglers_ += static_cast<int64_t>(job->stragglers.size()) - static_cast<int64_t>(saved.size());
    metrics_.RecordStragglerReport(report.kind == StragglerReport::Kind::kRecovered);
    RedeployLocked(*job);
  }
  UpdateGauges();
  return ListStragglers(job_id);
}

namespace {

// A point's time and powers, as the power target's answer shows them.
json PowerPointJson(const Frontier& frontier, size_t index) {
  const FrontierPoint& p = frontier.points()[index];
  const double t_min = frontier.points()[frontier.fastest_index()].time_s;
  const auto peak = PeakPowerPerGpuW(frontier, index);
  return json{{"index", index},
              {"time_s", p.time_s},
              {"slowdown", t_min > 0 ? p.time_s / t_min : 1.0},
              {"avg_power_per_gpu_w", AveragePowerPerGpuW(frontier, index)},
              {"peak_1s_power_per_gpu_w", peak ? json(*peak) : json(nullptr)}};
}

// Point `index`'s power per GPU of the kind `cap` was decided by.
double CapKindPower(const Frontier& frontier, const PowerTarget& target, const PowerCapPoint& cap, size_t index) {
  const bool peak = target.kind == PowerTarget::Kind::kPeak1s && cap.decided_by_target_kind;
  return peak ? PeakPowerPerGpuW(frontier, index).value_or(0.0) : AveragePowerPerGpuW(frontier, index);
}

// What GET /v1/jobs/{id}/power_target answers (the job's mutex held); `met_out` and
// `point_power_out`, when given, get what /metrics shows.
json PowerTargetJson(const std::string& job_id, const std::optional<PowerTarget>& target, FrontierState frontier_state,
                     const Frontier* frontier, size_t selected, const Deployment& deployment,
                     const StepProgress& progress, bool* met_out, double* point_power_out) {
  // Whether the ranks run the deployment: every rank has reported completing its apply step.
  const std::optional<int64_t> min_step = progress.min_step();
  json out = {{"job_id", job_id},
              {"power_target", target ? target->ToJson() : json(nullptr)},
              {"frontier", FrontierStateName(frontier_state)},
              {"deployment",
               {{"version", deployment.version},
                {"apply_from_step", deployment.apply_from_step},
                {"ranks_min_step", min_step ? json(*min_step) : json(nullptr)},
                {"every_rank_past_apply_step", min_step && *min_step > deployment.apply_from_step}}}};
  if (target) out["kind"] = target->KindName();
  const bool ready = frontier_state == FrontierState::kReady && frontier != nullptr;
  out["applied"] = target && ready;
  if (ready) out["selected"] = PowerPointJson(*frontier, selected);
  if (!target) return out;
  if (!ready) {
    out["note"] = "the frontier is " + std::string(FrontierStateName(frontier_state)) +
                  ": the target is kept and applied when the frontier is ready";
    return out;
  }
  const PowerCapPoint cap = PointForPowerTarget(*frontier, *target);
  out["point"] = PowerPointJson(*frontier, cap.index);
  out["point_power_per_gpu_w"] = cap.power_per_gpu_w;
  if (!cap.decided_by_target_kind) out["kind"] = "average";
  // Met: every pipeline's deployed point is at or below the target.
  bool met = cap.met;
  if (deployment.target.plan) {
    std::set<size_t> deployed = {deployment.target.base_index};
    if (!deployment.target.straggler_dp.empty()) deployed.insert(deployment.target.non_straggler_index);
    for (size_t i : deployed) {
      if (i >= frontier->points().size()) continue;
      if (CapKindPower(*frontier, *target, cap, i) > target->per_gpu_w) met = false;
    }
    out["deployment"]["plan_index"] = deployment.target.base_index;
    if (!deployment.target.straggler_dp.empty()) {
      out["deployment"]["non_straggler_plan_index"] = deployment.target.non_straggler_index;
    }
  }
  out["met"] = met;
  if (!cap.met) out["lowest_power_per_gpu_w"] = cap.power_per_gpu_w;
  if (!cap.note.empty()) out["note"] = cap.note;
  if (met_out) *met_out = met;
  if (point_power_out) *point_power_out = cap.power_per_gpu_w;
  return out;
}

}  // namespace

Answer JobRegistry::ChangePowerTarget(const std::string& job_id, std::optional<PowerTarget> target) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  const std::optional<PowerTarget> saved = job->power_target;
  if (target && target->lease_s > 0) target->expires_at_unix_s = UnixNowS() + target->lease_s;
  if (target && target->lease_s <= 0) target->expires_at_unix_s = 0;
  job->power_target = std::move(target);
  if (auto s = PutStateLocked(*job); !s) {
    job->power_target = saved;
    return StoreFailed(s.error());
  }
  const uint64_t version = job->deployment.version;
  RedeployLocked(*job);
  std::string what = "cleared";
  if (const auto& now = job->power_target) {
    what = std::string(now->KindName()) + " " + GeneralText(now->per_gpu_w) + " W per GPU";
    if (!now->reason.empty()) what += " (" + now->reason + ")";
  }
  // A lease renewed with the same target (a row controller's, every lease / 3) is not logged.
  const auto& now = job->power_target;
  const bool renewal = saved && now && saved->kind == now->kind && saved->per_gpu_w == now->per_gpu_w &&
                       job->deployment.version == version;
  if (!renewal) {
    std::fprintf(stderr, "wattcut serve: job %s: power target %s: deployment version %llu%s\n",
                 PrintableText(job_id).c_str(), what.c_str(), static_cast<unsigned long long>(job->deployment.version),
                 job->deployment.version != version ? " (new)" : " (unchanged)");
  }
  const bool ready = job->frontier_state == FrontierState::kReady && job->frontier;
  return Text(PowerTargetJson(job_id, job->power_target, job->frontier_state, ready ? job->frontier.get() : nullptr,
                              ready ? job->SelectedPoint() : 0, job->deployment, job->progress, nullptr, nullptr));
}

Answer JobRegistry::SetPowerTarget(const std::string& job_id, const PowerTarget& target) {
  return ChangePowerTarget(job_id, target);
}

Answer JobRegistry::ClearPowerTarget(const std::string& job_id) { return ChangePowerTarget(job_id, std::nullopt); }

Answer JobRegistry::SetDeadlineSchedule(const std::string& job_id, const DeadlineScheduleSpec& spec) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (job->frontier_state != FrontierState::kReady || !job->frontier) {
    return Error::Conflict("job '" + job_id + "': its frontier is not ready (" +
                           std::string(FrontierStateName(job->frontier_state)) +
                           "): a deadline schedule is planned on it");
  }
  const double now = UnixNowS();
  DeadlineFollowing next{spec, {}, {}, job->frontier_generation, {}};
  next.spec.from_step = job->progress.max_step();
  next.spec.replans = 0;
  if (next.spec.start.empty()) next.spec.start = FormatTimestamp(now);
  if (Status s = ComputeDeadline(next, *job->frontier, job->info, now); !s) return s.error();
  const std::optional<DeadlineFollowing> saved = job->deadline;
  job->deadline = std::move(next);
  if (auto s = PutStateLocked(*job); !s) {
    job->deadline = saved;
    return StoreFailed(s.error());
  }
  RedeployLocked(*job);
  std::fprintf(stderr, "wattcut serve: job %s: deadline schedule set: %s iterations by %s, deployment version %llu\n",
               PrintableText(job_id).c_str(), GeneralText(job->deadline->spec.iterations).c_str(),
               PrintableText(job->deadline->spec.deadline).c_str(),
               static_cast<unsigned long long>(job->deployment.version));
  return Text(DeadlineJson(job_id, *job->deadline, job->progress.max_step(), now));
}

Answer JobRegistry::ClearDeadlineSchedule(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  const std::optional<DeadlineFollowing> saved = job->deadline;
  job->deadline.reset();
  if (auto s = PutStateLocked(*job); !s) {
    job->deadline = saved;
    return StoreFailed(s.error());
  }
  RedeployLocked(*job);
  return Text(json{{"job_id", job_id}, {"schedule", nullptr}});
}

Answer JobRegistry::GetDeadlineSchedule(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (!job->deadline) return Error::NotFound("job '" + job_id + "' has no deadline schedule");
  const double now = UnixNowS();
  // A read changes nothing: a schedule not computed yet since a restart is computed here for the
  // answer only.
  DeadlineFollowing shown = *job->deadline;
  if (shown.frontier_generation != job->frontier_generation && job->frontier_state == FrontierState::kReady &&
      job->frontier) {
    if (Status s = ComputeDeadline(shown, *job->frontier, job->info, now); !s) shown.error = s.error().message;
  }
  return Text(DeadlineJson(job_id, shown, job->progress.max_step(), now));
}

Answer JobRegistry::GetPowerTarget(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  LapsePowerTargetLocked(*job);
  const bool ready = job->frontier_state == FrontierState::kReady && job->frontier;
  return Text(PowerTargetJson(job_id, job->power_target, job->frontier_state, ready ? job->frontier.get() : nullptr,
                              ready ? job->SelectedPoint() : 0, job->deployment, job->progress, nullptr, nullptr));
}

std::vector<PowerTargetGauge> JobRegistry::PowerTargetGauges() {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::shared_lock lock(mu_);
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  std::vector<PowerTargetGauge> out;
  for (const auto& job : jobs) {
    std::lock_guard lock(job->mu);
    if (!job->deleted) LapsePowerTargetLocked(*job);
    if (!job->power_target || job->deleted) continue;
    PowerTargetGauge g;
    g.job_id = job->info.job_id;
    g.kind = job->power_target->KindName();
    g.target_per_gpu_w = job->power_target->per_gpu_w;
    const bool ready = job->frontier_state == FrontierState::kReady && job->frontier;
    if (ready) {
      g.applied = true;
      (void)PowerTargetJson(g.job_id, job->power_target, job->frontier_state, job->frontier.get(), job->SelectedPoint(),
                            job->deployment, job->progress, &g.met, &g.point_per_gpu_w);
    }
    out.push_back(std::move(g));
  }
  return out;
}

Answer JobRegistry::PreviewSchedule(const std::string& job_id, int64_t rank) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (rank >= job->info.world_size) return RankOutOfRange("", rank, job->info.world_size);
  if (!job->ranks[static_cast<size_t>(rank)]) {
    return Error::Conflict("rank " + std::to_string(rank) + " has not registered");
  }
  const ScheduleDecision preview = Decide(*job, /*may_start_profiling=*/false);
  Answer answer = ScheduleAnswer(*job, preview, static_cast<int>(rank));
  if (!answer) return answer;
  json body = json::parse(*answer);
  body["mode"] = ScheduleModeName(preview.mode);
  body["round"] = job->barrier.completed_rounds() + 1;
  if (preview.mode == ScheduleDecision::Mode::kPlan) {
    body["plan_index"] = preview.PlanIndexFor(job->ranks[static_cast<size_t>(rank)]->dp_rank);
  }
  return Text(body);
}

}  // namespace wattcut::server
