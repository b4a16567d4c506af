#include "wattcut/server/job.h"

#include <set>
#include <tuple>
#include <type_traits>
#include <utility>

#include "wattcut/server/job_checks.h"
#include "wattcut/server/rank_profile_aggregation.h"

namespace wattcut::server {

Job::Job(JobStore& store, JobInfo info, PlannerSettings planner) : store_(store) {
  MutexLock lock(mu_);
  info_ = std::move(info);
  planner_ = std::move(planner);
  SizeRankState();
}

Job::Job(JobStore& store, DecodedJob decoded) : store_(store) {
  MutexLock lock(mu_);
  info_ = std::move(decoded.info);
  planner_ = std::move(decoded.planner);
  SizeRankState();
  const size_t ws = static_cast<size_t>(info_.world_size);
  ranks_ = std::move(decoded.ranks);
  rank_profiles_ = std::move(decoded.rank_profiles);
  has_result_ = std::move(decoded.has_result);
  for (const auto& r : ranks_) num_registered_ += r.has_value() ? 1 : 0;
  for (const auto& p : rank_profiles_) num_rank_profiles_ += p.has_value() ? 1 : 0;
  for (uint8_t got : has_result_) num_results_ += got == 1 ? 1 : 0;
  const JobState& state = decoded.state;
  barrier_.Reset(ws, state.completed_rounds);
  sweep_ = ProfilingSweep(state.sweep, ws);
  selection_ = state.selection;
  stragglers_ = state.stragglers;
  power_target_ = state.power_target;
  if (state.deadline_schedule) deadline_ = DeadlineFollowing{*state.deadline_schedule, {}, {}, std::nullopt, {}};
  frontier_attempts_ = state.frontier_attempts;
  measured_gpu_energy_ = state.measured_gpu_energy;
  deployment_.version = state.deployment_version;
  deployment_.apply_from_step = state.deployment_apply_from_step;
  progress_.set_fallback_steps_per_s(state.deployment_steps_per_s);
}

void Job::SizeRankState() {
  const size_t ws = static_cast<size_t>(info_.world_size);
  ranks_.assign(ws, std::nullopt);
  rank_profiles_.assign(ws, std::nullopt);
  has_result_.assign(ws, 0);
  barrier_.Reset(ws, 0);
  sweep_ = ProfilingSweep(ws);
  progress_ = StepProgress(ws);
}

Error NothingStored(const Error& store_error) {
  return Error::IOError("could not persist the change, nothing was changed: " + store_error.message);
}

// ---- Commit: check, store, apply.

Status Job::Commit(JobEdit edit) {
  if (Status checked = Check(edit); !checked) return checked;
  if (Status stored = Store(edit); !stored) {
    return NothingStored(stored.error());
  }
  Apply(std::move(edit));
  return Status::Ok();
}

Status Job::CommitBookkeeping(JobEdit edit) {
  if (Status checked = Check(edit); !checked) return checked;
  Status stored = Store(edit);
  Apply(std::move(edit));
  return stored;
}

Status Job::Check(const JobEdit& e) const {
  const int rows = (e.register_rank ? 1 : 0) + (e.rank_profile ? 1 : 0) + (e.result ? 1 : 0) +
                   (e.planner && !e.profile ? 1 : 0) + (e.profile ? 1 : 0) + (e.frontier_result ? 1 : 0);
  if (rows > 1 || (rows == 1 && e.has_state_parts() && !e.rank_profile)) {
    return Error{"job '" + info_.job_id + "': a change that is not one store transaction (job_edit.h)"};
  }
  const std::string prefix = "job '" + info_.job_id + "': ";
  if (e.register_rank) {
    if (Status s = CheckNewRank(info_, ranks_, *e.register_rank); !s)
      return Error{prefix + s.error().message, s.error().code};
    if (Status s = CheckRankAgainstProfile(*e.register_rank, profile_.get()); !s)
      return Error{prefix + s.error().message};
  }
  if (e.rank_profile) {
    auto registered = RegisteredRank(e.rank_profile->rank);
    if (!registered) return registered.error();
    if (Status s = CheckRankProfile(**registered, *e.rank_profile); !s) return s;
  }
  if (e.result) {
    if (auto registered = RegisteredRank(e.result->rank); !registered) return registered.error();
  }
  if (e.planner) {
    if (Status s = CheckPipelineLimits(info_, *e.planner); !s) return s;
  }
  if (e.profile) {
    const Profile& profile = *e.profile->profile;
    if (profile.num_stages() != info_.pp_degree) {
      return Error{"the profile has " + std::to_string(profile.num_stages()) + " stages but the job's pp_degree is " +
                   std::to_string(info_.pp_degree)};
    }
    for (const auto& r : ranks_) {
      if (!r) continue;
      if (Status s = CheckRankAgainstProfile(*r, &profile); !s) return s;
    }
  }
  if (e.selection && e.selection->kind == PlanSelection::Kind::kIndex && frontier_ &&
      e.selection->value >= static_cast<double>(frontier_->points().size())) {
    return Error{"index " + std::to_string(static_cast<int64_t>(e.selection->value)) + " is out of range [0, " +
                 std::to_string(frontier_->points().size()) + ")"};
  }
  if (e.stragglers) {
    for (const auto& [dp, straggler] : *e.stragglers) {
      if (Status s = CheckDpRank(info_, dp); !s) return s;
    }
  }
  if (e.measured_gpu_energy && e.measured_gpu_energy->size() > kMaxMeasuredNodesPerJob) {
    return Error{prefix + std::to_string(kMaxMeasuredNodesPerJob) +
                     " nodes have reported their GPU energy, the most a job keeps: another node's report is not kept",
                 ErrorCode::kConflict};
  }
  if (e.measured_gpu_energy && TotalGpus(*e.measured_gpu_energy) > kMaxMeasuredGpusPerJob) {
    return Error{prefix + "the nodes' reports would list " + std::to_string(TotalGpus(*e.measured_gpu_energy)) +
                     " GPUs, more than the " + std::to_string(kMaxMeasuredGpusPerJob) +
                     " a job keeps: this report is not kept",
                 ErrorCode::kConflict};
  }
  return Status::Ok();
}

namespace {

// Calls `visit(part, value)` on each part of an edit's state document (StateParts), in order, with
// the job's value of it (Job::StateValuesOf); what the calls return, as a tuple, unless nothing.
template <class Parts, class Values, class Visit>
auto EachPartAndValue(Parts parts, Values values, Visit visit) {
  static_assert(std::tuple_size_v<Parts> == std::tuple_size_v<Values>, "every state part has the job's value of it");
  return [&]<size_t... I>(std::index_sequence<I...>) {
    if constexpr ((std::is_void_v<decltype(visit(std::get<I>(parts), std::get<I>(values)))> && ...)) {
      (visit(std::get<I>(parts), std::get<I>(values)), ...);
    } else {
      return std::tuple<decltype(visit(std::get<I>(parts), std::get<I>(values)))...>(
          visit(std::get<I>(parts), std::get<I>(values))...);
    }
  }
  (std::make_index_sequence<std::tuple_size_v<Parts>>());
}

// A part after the edit: its new value when the edit sets it, else the job's.
template <class T>
const T& PartAfter(const std::optional<T>& part, const T& value) {
  return part ? *part : value;
}
int64_t PartAfter(bool complete_round, const RoundBarrier& barrier) {
  return barrier.completed_rounds() + (complete_round ? 1 : 0);
}

// Applies a part: the job's value becomes the new one when the edit sets it.
template <class T>
void ApplyPart(std::optional<T>& part, T& value) {
  if (part) value = std::move(*part);
}
void ApplyPart(bool complete_round, RoundBarrier& barrier) {
  if (complete_round) barrier.Complete();
}

}  // namespace

JobState Job::StateAfter(const JobEdit& e) const {
  const auto& [selection, stragglers, power_target, deadline, sweep, frontier_attempts, deployment, measured_gpu_energy,
               completed_rounds] =
      EachPartAndValue(StateParts(e), StateValuesOf(*this),
                       [](const auto& part, const auto& value) -> decltype(auto) { return PartAfter(part, value); });
  return JobState{
      .completed_rounds = completed_rounds,
      .selection = selection,
      .stragglers = stragglers,
      .frontier_attempts = frontier_attempts,
      .sweep = sweep.state(),
      .deployment_version = deployment.version,
      .deployment_apply_from_step = deployment.apply_from_step,
      .deployment_steps_per_s = progress_.steps_per_s(),
      .power_target = power_target,
      .deadline_schedule = deadline ? std::optional<DeadlineScheduleSpec>(deadline->spec) : std::nullopt,
      .measured_gpu_energy = measured_gpu_energy,
  };
}

Status Job::Store(const JobEdit& e) {
  const std::string& id = info_.job_id;
  if (e.profile) {
    return store_.PutProfile(id, e.profile->stored_csv, e.profile->source, ToJson(e.planner.value_or(planner_)).dump());
  }
  if (e.planner) return store_.PutPlanner(id, ToJson(*e.planner).dump());
  if (e.frontier_result) {
    if (!e.frontier_result->frontier) return store_.PutFrontierSummary(id, e.frontier_result->summary_json);
    return store_.PutFrontier(id, e.frontier_result->stored_text, e.frontier_result->summary_json);
  }
  if (e.register_rank) return store_.PutRank(id, e.register_rank->rank, ToJson(*e.register_rank).dump());
  if (e.result) return store_.PutResult(id, e.result->rank, ToJson(*e.result).dump());
  if (e.rank_profile) {
    if (!e.has_state_parts()) return store_.PutRankProfile(id, e.rank_profile->rank, ToJson(*e.rank_profile).dump());
    return store_.PutRankProfileAndState(id, e.rank_profile->rank, ToJson(*e.rank_profile).dump(),
                                         EncodeJobState(StateAfter(e)));
  }
  return store_.PutState(id, EncodeJobState(StateAfter(e)));
}

void Job::Apply(JobEdit e) {
  if (e.register_rank) {
    auto& slot = ranks_[static_cast<size_t>(e.register_rank->rank)];
    if (!slot) ++num_registered_;
    slot = std::move(*e.register_rank);
  }
  if (e.rank_profile) {
    auto& slot = rank_profiles_[static_cast<size_t>(e.rank_profile->rank)];
    if (!slot) ++num_rank_profiles_;
    slot = std::move(*e.rank_profile);
  }
  if (e.result) {
    uint8_t& got = has_result_[static_cast<size_t>(e.result->rank)];
    if (!got) ++num_results_;
    got = 1;
  }
  if (e.planner) {
    planner_ = std::move(*e.planner);
    schedule_.reset();
  }
  if (e.profile) {
    profile_ = std::move(e.profile->profile);
    profile_source_ = std::move(e.profile->source);
    profile_warnings_ = std::move(e.profile->dropped);
    frontier_note_.clear();
  }
  if (e.frontier_result) {
    if (e.frontier_result->frontier) {
      SetFrontierReady(std::move(e.frontier_result->frontier), e.frontier_result->compute_seconds);
    } else {
      SetFrontierFailedAfter(std::move(e.frontier_result->error), e.frontier_result->compute_seconds);
    }
  }
  EachPartAndValue(StateParts(e), StateValuesOf(*this), [](auto& part, auto& value) { ApplyPart(part, value); });
}

// ---- Ranks.

Result<const RankInfo*> Job::RegisteredRank(int64_t rank) const { return server::RegisteredRank(info_, ranks_, rank); }

Status Job::CheckRankAgainstProfile(const RankInfo& rank, const Profile* profile) const {
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

// ---- The frontier.

uint64_t Job::BeginFrontierComputation() {
  ++frontier_generation_;
  frontier_state_ = FrontierState::kComputing;
  frontier_error_.clear();
  frontier_.reset();
  plan_cache_.clear();
  return frontier_generation_;
}

void Job::SetFrontierReady(std::shared_ptr<const Frontier> frontier, double compute_seconds) {
  frontier_ = std::move(frontier);
  frontier_state_ = FrontierState::kReady;
  frontier_seconds_ = compute_seconds;
  frontier_error_.clear();
  plan_cache_.clear();
}

void Job::SetFrontierFailed(std::string error) {
  frontier_state_ = FrontierState::kFailed;
  frontier_error_ = std::move(error);
}

void Job::SetFrontierFailedAfter(std::string error, double compute_seconds) {
  frontier_seconds_ = compute_seconds;
  SetFrontierFailed(std::move(error));
}

void Job::RestoreProfile(std::string source, std::shared_ptr<const Profile> profile,
                         std::vector<DroppedFrequency> warnings) {
  profile_source_ = std::move(source);
  profile_ = std::move(profile);
  profile_warnings_ = std::move(warnings);
}

void Job::MarkDeleted() {
  deleted_ = true;
  ++frontier_generation_;
}

// ---- Deployments.

void Job::CountSaving() {
  saving_.Advance(progress_.max_step(), StepRate{StepSaving(), StepEnergy(), deployment_.target.plan},
                  deployment_.apply_from_step);
}

Status Job::RefreshDeadline(DeadlineFollowing following) {
  if (!deadline_ || !(deadline_->spec == following.spec)) {
    return Error{"job '" + info_.job_id + "': a deadline schedule with another spec is a stored change"};
  }
  deadline_ = std::move(following);
  return Status::Ok();
}

// ---- Caches.

Result<const PipelineSchedule*> Job::InstructionOrder() {
  if (!schedule_) {
    auto built =
        BuildPipelineSchedule(planner_.schedule, info_.pp_degree, planner_.num_microbatches, planner_.virtual_stages);
    if (!built) return built.error();
    schedule_ = std::move(*built);
  }
  return &*schedule_;
}

std::shared_ptr<const StageSchedules> Job::PlanSchedules(size_t index) {
  auto it = plan_cache_.find(index);
  if (it != plan_cache_.end()) return it->second;
  auto schedules = std::make_shared<const StageSchedules>(PlanStageSchedules(*frontier_, index));
  if (plan_cache_.size() > 16) plan_cache_.clear();
  plan_cache_[index] = schedules;
  return schedules;
}

const std::optional<AllMaxPoint>& Job::AllMax() {
  if (!frontier_ || !profile_) {
    all_max_.reset();
    return all_max_;
  }
  if (all_max_generation_ != frontier_generation_) {
    all_max_ = AllMaxReference(*profile_, *frontier_, planner_.virtual_stages);
    all_max_generation_ = frontier_generation_;
  }
  return all_max_;
}

double Job::StepSaving() {
  const DeploymentTarget& target = deployment_.target;
  if (!target.plan || !frontier_ || target.frontier_generation != frontier_generation_) return 0;
  const auto& reference = AllMax();
  return reference ? StepSavingJ(*frontier_, *reference, target, info_.dp_degree, info_.tp_degree) : 0;
}

std::optional<double> Job::StepEnergy() {
  const DeploymentTarget& target = deployment_.target;
  if (!frontier_ || (target.plan && target.frontier_generation != frontier_generation_)) return std::nullopt;
  return StepEnergyJ(*frontier_, AllMax(), target, info_.dp_degree, info_.tp_degree);
}

Result<AggregatedProfile> Job::AggregateReceivedRankProfiles() const {
  std::vector<RankProfile> all;
  for (const auto& rp : rank_profiles_) {
    if (rp) all.push_back(*rp);
  }
  return AggregateRankProfiles(all, info_.pp_degree);
}

}  // namespace wattcut::server
