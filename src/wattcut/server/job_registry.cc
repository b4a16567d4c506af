#include "wattcut/server/job_registry.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>

#include "wattcut/base/printable_text.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/planning_limits.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

Reply Ok(const json& body) {
  return Reply{200, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}
Reply Fail(int status, const std::string& message) { return Reply{status, ErrorBody(message)}; }
Reply NoJob(const std::string& job_id) {
  return Fail(404, "unknown job '" + PrintableText(job_id) + "'");
}
Reply StoreFailed(const Error& error) {
  return Fail(503, "could not persist the change, nothing was changed: " + error.message);
}

// The planner's bounds on a job's pipeline (pp_degree stages x num_microbatches), checked
// when the settings arrive, before any work; nullopt when they fit (or are not set yet).
std::optional<Reply> CheckPipelineLimits(const JobInfo& info, const PlannerSettings& planner) {
  if (planner.num_microbatches < 1) return std::nullopt;
  if (auto s = CheckPipelineShape(info.pp_degree, planner.num_microbatches); !s) {
    return Fail(422, "planner settings beyond the planner's limits: " + s.error().message);
  }
  return std::nullopt;
}

// Per stage: the JSON text of its [[instruction, freq_mhz], ...] list.
using StageSchedules = std::vector<std::string>;

std::string Number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

// The stored form of a profile built from rank profiles, read back at start-up with
// ParseProfileCsv (%.17g: every double reads back as itself).
std::string ProfileCsvText(const Profile& profile) {
  std::string csv = "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      for (const Measurement& m : profile.measurements(s, kind)) {
        csv += std::to_string(s) + "," + std::string(InstructionName(kind)) + "," + std::to_string(m.freq_mhz) + "," +
               Number(m.time_s) + "," + Number(m.energy_j) + "\n";
      }
    }
  }
  return csv;
}

// GET /v1/jobs/{id}'s "profile_warnings": one object per frequency left out.
json ProfileWarningsJson(const std::vector<DroppedFrequency>& dropped) {
  json out = json::array();
  for (const DroppedFrequency& d : dropped) {
    json missing = json::array();
    for (const RankId& r : d.missing_ranks) {
      missing.push_back({{"rank", r.rank}, {"dp_rank", r.dp_rank}, {"tp_rank", r.tp_rank}});
    }
    out.push_back({{"stage", d.stage},
                   {"instruction", std::string(InstructionName(d.kind))},
                   {"freq_mhz", d.freq_mhz},
                   {"missing_ranks", missing},
                   {"stage_ranks", d.num_ranks},
                   {"message", DroppedFrequencyMessage(d)}});
  }
  return out;
}

std::string ScheduleText(const std::vector<std::pair<InstructionKind, int>>& entries) {
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += ',';
    out += "[\"";
    out += InstructionName(entries[i].first);
    out += "\",";
    out += std::to_string(entries[i].second);
    out += ']';
  }
  out += ']';
  return out;
}

std::string SanitizeMetadata(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '-' || c == '_' || c == '.';
    out += safe ? c : '_';
  }
  return out;
}

const char* FrontierStateName(int state) {
  static const char* const kNames[] = {"none", "computing", "ready", "failed"};
  return kNames[state];
}

}  // namespace

struct JobRegistry::Decision {
  enum class Mode { kNone, kAllMax, kProfiling, kPlan, kError };
  Mode mode = Mode::kNone;
  int profiling_freq_mhz = 0;
  size_t base_index = 0;
  size_t straggler_index = 0;
  std::shared_ptr<const StageSchedules> base;
  std::shared_ptr<const StageSchedules> for_non_stragglers;
  std::set<int> straggler_dp;
  double straggler_time_s = 0;
  int error_status = 0;
  std::string error;
};

struct JobRegistry::Job {
  enum class FrontierState { kNone = 0, kComputing = 1, kReady = 2, kFailed = 3 };
  struct Straggler {
    StragglerReport::Kind kind = StragglerReport::Kind::kIterationTime;
    double value = 0;
  };
  struct Profiling {
    bool active = false;
    bool done = false;
    std::vector<int> freqs;  // descending
    size_t step = 0;
    std::vector<uint8_t> got;  // per rank: result received for this step
    int got_count = 0;
  };

  std::mutex mu;
  std::condition_variable cv;
  JobInfo info;
  PlannerSettings planner;
  std::vector<std::optional<RankInfo>> ranks;
  int num_registered = 0;
  // Long-poll barrier.
  int64_t round = 0;
  std::vector<uint8_t> waiting;
  int num_waiting = 0;
  Decision decision;  // what round `round` served
  // Profile and frontier.
  std::string profile_source;
  std::shared_ptr<const Profile> profile;
  // The frequencies the profile's rank aggregation left out (some rank lacked them).
  std::vector<DroppedFrequency> profile_warnings;
  std::vector<std::optional<RankProfile>> rank_profiles;
  int num_rank_profiles = 0;
  FrontierState frontier_state = FrontierState::kNone;
  std::string frontier_error;
  double frontier_seconds = 0;
  uint64_t frontier_generation = 0;
  // Computations started and not finished since the last one that finished (stored).
  int frontier_attempts = 0;
  std::shared_ptr<const Frontier> frontier;
  std::map<size_t, std::shared_ptr<const StageSchedules>> plan_cache;
  std::optional<PipelineSchedule> schedule;  // instruction order, for AllMax/profiling
  // Plan choice.
  PlanSelection selection;
  std::map<int, Straggler> stragglers;  // by dp rank
  Profiling profiling;
  std::vector<uint8_t> has_result;  // per rank: a ProfilingResult is stored
  int num_results = 0;
  bool deleted = false;

  // Sizes the per-rank state for info.world_size ranks, all empty.
  void SizeRankState() {
    size_t ws = static_cast<size_t>(info.world_size);
    ranks.resize(ws);
    waiting.assign(ws, 0);
    rank_profiles.resize(ws);
    profiling.got.assign(ws, 0);
    has_result.assign(ws, 0);
  }

  // Every rank profile received so far, aggregated into one pipeline profile.
  Result<AggregatedProfile> AggregateReceivedRankProfiles() const;

  Status CheckRankAgainstProfile(const RankInfo& rank) const {
    if (!profile || rank.pp_rank >= profile->num_stages()) return Status::Ok();
    std::set<int> declared(rank.available_frequencies.begin(), rank.available_frequencies.end());
    for (int k = 0; k < kNumInstructionKinds; ++k) {
      for (const Measurement& m :
           profile->measurements(rank.pp_rank, static_cast<InstructionKind>(k))) {
        if (!declared.count(m.freq_mhz)) {
          return Error{"rank " + std::to_string(rank.rank) + " (pp_rank " +
                       std::to_string(rank.pp_rank) + ") did not declare frequency " +
                       std::to_string(m.freq_mhz) + " MHz, which the job's profile uses"};
        }
      }
    }
    return Status::Ok();
  }

  std::shared_ptr<const StageSchedules> PlanSchedules(size_t index) {
    auto it = plan_cache.find(index);
    if (it != plan_cache.end()) return it->second;
    FrequencyPlan plan = frontier->PlanAt(index);
    auto schedules = std::make_shared<StageSchedules>();
    for (const auto& stage : plan.stages) {
      std::vector<std::pair<InstructionKind, int>> entries;
      entries.reserve(stage.size());
      for (const PlannedComputation& c : stage) entries.emplace_back(c.kind, c.freq_mhz);
      schedules->push_back(ScheduleText(entries));
    }
    if (plan_cache.size() > 16) plan_cache.clear();
    plan_cache[index] = schedules;
    return schedules;
  }

  size_t BaseIndex() const {
    switch (selection.kind) {
      case PlanSelection::Kind::kFastest:
        return frontier->fastest_index();
      case PlanSelection::Kind::kMinEnergy:
        return frontier->min_energy_index();
      case PlanSelection::Kind::kIndex:
        return std::min(static_cast<size_t>(selection.value), frontier->fastest_index());
      case PlanSelection::Kind::kIterationTime:
        return frontier->IndexForIterationTime(selection.value);
    }
    return frontier->fastest_index();
  }

  // T' of the slowest straggler, or 0 when none.
  double StragglerTime(size_t base_index) const {
    double t = 0;
    for (const auto& [dp, s] : stragglers) {
      double v = s.kind == StragglerReport::Kind::kSlowdown
                     ? s.value * frontier->points()[base_index].time_s
                     : s.value;
      t = std::max(t, v);
    }
    return t;
  }
};

Result<AggregatedProfile> JobRegistry::Job::AggregateReceivedRankProfiles() const {
  std::vector<RankProfile> all;
  for (const auto& rp : rank_profiles) {
    if (rp) all.push_back(*rp);
  }
  return AggregateRankProfiles(all, info.pp_degree);
}

Result<AggregatedProfile> AggregateRankProfiles(const std::vector<RankProfile>& profiles, int pp_degree) {
  std::vector<RankMeasurement> measurements;
  for (const RankProfile& p : profiles) {
    if (p.pp_rank < 0 || p.pp_rank >= pp_degree) {
      return Error{"rank " + std::to_string(p.rank) + ": pp_rank " + std::to_string(p.pp_rank) +
                   " >= pp_degree " + std::to_string(pp_degree)};
    }
    const RankId rank{p.rank, p.dp_rank, p.tp_rank};
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      const bool forward = kind == InstructionKind::kForward;
      const auto& times = forward ? p.forward_time : p.backward_time;
      const auto& energies = forward ? p.forward_energy : p.backward_energy;
      // A frequency counts as measured by this rank when it has both a time and an energy.
      for (const auto& [freq_mhz, time_s] : times) {
        auto energy = energies.find(freq_mhz);
        if (energy == energies.end()) continue;
        measurements.push_back(RankMeasurement{p.pp_rank, kind, freq_mhz, rank, time_s, energy->second});
      }
    }
  }
  return AggregateRankMeasurements(std::move(measurements), pp_degree);
}

JobRegistry::JobRegistry(JobStore& store, Metrics& metrics, Options options)
    : store_(store), metrics_(metrics), options_(std::move(options)) {
  worker_ = std::make_unique<FrontierWorker>(
      options_.frontier_threads,
      [this](const FrontierTask& task) { return OnFrontierStarted(task); },
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
      job->cv.notify_all();
    }
  }
  if (worker_) worker_->Stop();
}

void JobRegistry::UpdateGauges() { metrics_.SetGauges(num_jobs_.load(), num_ranks_.load()); }

Reply JobRegistry::MissingJob(const std::string& job_id) {
  std::shared_lock lock(mu_);
  auto it = quarantined_.find(job_id);
  if (it == quarantined_.end()) return NoJob(job_id);
  return Fail(409, "job '" + PrintableText(job_id) +
                       "' is quarantined: its stored data cannot be read (" + it->second +
                       "); its rows are kept in the store as they are; DELETE /v1/jobs/" +
                       PrintableText(job_id) + " removes them");
}

std::shared_ptr<JobRegistry::Job> JobRegistry::Find(const std::string& job_id) {
  std::shared_lock lock(mu_);
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second;
}

std::string JobRegistry::StateJson(const Job& job) const {
  json stragglers = json::array();
  for (const auto& [dp, s] : job.stragglers) {
    json entry = {{"dp_rank", dp}};
    entry[s.kind == StragglerReport::Kind::kSlowdown ? "slowdown" : "iteration_time_s"] = s.value;
    stragglers.push_back(entry);
  }
  json got = json::array();
  for (size_t r = 0; r < job.profiling.got.size(); ++r) {
    if (job.profiling.got[r]) got.push_back(r);
  }
  return json{{"round", job.round},
              {"selection", job.selection.ToJson()},
              {"stragglers", stragglers},
              {"frontier_attempts", job.frontier_attempts},
              {"profiling",
               {{"active", job.profiling.active},
                {"done", job.profiling.done},
                {"freqs", job.profiling.freqs},
                {"step", job.profiling.step},
                {"got", got}}}}
      .dump();
}

Status JobRegistry::LoadStoredJob(const StoredJob& s, Job& job) {
  auto reg = JobRegistrationFromJson(json::parse(s.info_json));
  if (!reg) return Error{"job info: " + reg.error().message};
  job.info = reg->info;
  job.info.job_id = s.job_id;
  auto planner = PlannerSettingsFromJson(json::parse(s.planner_json));
  if (!planner) return Error{"planner settings: " + planner.error().message};
  job.planner = *planner;
  job.SizeRankState();
  size_t ws = static_cast<size_t>(job.info.world_size);
  for (const auto& [rank, text] : s.ranks) {
    auto r = RankInfoFromJson(json::parse(text));
    if (!r) return Error{"rank " + std::to_string(rank) + ": " + r.error().message};
    if (rank < 0 || static_cast<size_t>(rank) >= ws || r->rank != rank) {
      return Error{"rank row " + std::to_string(rank) + " is out of range or mislabelled"};
    }
    job.ranks[static_cast<size_t>(rank)] = *r;
    ++job.num_registered;
  }
  for (const auto& [rank, text] : s.results) {
    if (rank >= 0 && static_cast<size_t>(rank) < ws && !job.has_result[static_cast<size_t>(rank)]) {
      job.has_result[static_cast<size_t>(rank)] = 1;
      ++job.num_results;
    }
  }
  for (const auto& [rank, text] : s.rank_profiles) {
    auto p = RankProfileFromJson(json::parse(text));
    if (!p) return Error{"rank profile " + std::to_string(rank) + ": " + p.error().message};
    if (rank < 0 || static_cast<size_t>(rank) >= ws) {
      return Error{"rank profile row " + std::to_string(rank) + " is out of range"};
    }
    job.rank_profiles[static_cast<size_t>(rank)] = *p;
    ++job.num_rank_profiles;
  }
  json state = json::parse(s.state_json);
  job.round = state.at("round").get<int64_t>();
  auto sel = PlanSelection::FromJson(state.at("selection"));
  if (sel) job.selection = *sel;
  for (const json& entry : state.at("stragglers")) {
    Job::Straggler st;
    if (entry.contains("slowdown")) {
      st.kind = StragglerReport::Kind::kSlowdown;
      st.value = entry.at("slowdown").get<double>();
    } else {
      st.value = entry.at("iteration_time_s").get<double>();
    }
    job.stragglers[entry.at("dp_rank").get<int>()] = st;
  }
  job.frontier_attempts = state.value("frontier_attempts", 0);
  const json& prof = state.at("profiling");
  job.profiling.active = prof.at("active").get<bool>();
  job.profiling.done = prof.at("done").get<bool>();
  job.profiling.freqs = prof.at("freqs").get<std::vector<int>>();
  job.profiling.step = prof.at("step").get<size_t>();
  for (const json& r : prof.at("got")) {
    size_t rank = r.get<size_t>();
    if (rank < ws && !job.profiling.got[rank]) {
      job.profiling.got[rank] = 1;
      ++job.profiling.got_count;
    }
  }
  return Status::Ok();
}

Status JobRegistry::Load() {
  auto stored = store_.LoadAll();
  if (!stored) return stored.error();
  std::vector<std::shared_ptr<Job>> to_plan;  // submitted once every job is findable
  for (StoredJob& s : *stored) {
    auto job = std::make_shared<Job>();
    Status loaded = [&]() -> Status {
      try {
        return LoadStoredJob(s, *job);
      } catch (const std::exception& e) {
        return Error{std::string("corrupt stored JSON: ") + e.what()};
      }
    }();
    if (!loaded) {
      std::unique_lock lock(mu_);
      quarantined_[s.job_id] = loaded.error().message;
      continue;
    }
    if (!s.profile_csv.empty()) {
      auto read = ParseProfileCsvWithWarnings(s.profile_csv, "job " + s.job_id + " profile", job->info.pp_degree);
      Result<Profile> profile = read.ok() ? Result<Profile>(std::move(read->profile)) : Result<Profile>(read.error());
      job->profile_source = s.profile_source;
      if (read.ok()) {
        // A profile built from rank profiles is stored aggregated: its warnings come from
        // aggregating the stored rank profiles again.
        job->profile_warnings = std::move(read->dropped);
        if (s.profile_source != "csv") {
          if (auto again = job->AggregateReceivedRankProfiles(); again.ok()) job->profile_warnings = again->dropped;
        }
      }
      if (!profile) {
        job->frontier_state = Job::FrontierState::kFailed;
        job->frontier_error = "the stored profile cannot be read: " + profile.error().message +
                              "; upload it again (PUT /v1/jobs/{job_id}/profile)";
      } else if (job->frontier_attempts >= kMaxInterruptedFrontierAttempts) {
        job->profile = std::make_shared<Profile>(std::move(*profile));
        job->frontier_state = Job::FrontierState::kFailed;
        job->frontier_error =
            "the frontier computation was interrupted " + std::to_string(job->frontier_attempts) +
            " times in a row (the server stopped or crashed while computing it), so it is not "
            "computed again automatically; POST /v1/jobs/" + s.job_id +
            "/frontier computes it again";
      } else {
        job->profile = std::make_shared<Profile>(std::move(*profile));
        to_plan.push_back(job);
      }
    }
    num_ranks_ += job->num_registered;
    std::unique_lock lock(mu_);
    jobs_[s.job_id] = std::move(job);
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

Reply JobRegistry::RegisterJob(const JobRegistration& registration) {
  auto job = std::make_shared<Job>();
  job->info = registration.info;
  job->planner = registration.planner.value_or(options_.default_planner);
  if (auto refused = CheckPipelineLimits(job->info, job->planner)) return *refused;
  job->SizeRankState();

  JobInfo info = job->info;
  auto make_id = [&info](int64_t seq) {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
    std::string id = std::string(stamp) + "+dp" + std::to_string(info.dp_degree) + "+pp" +
                     std::to_string(info.pp_degree) + "+tp" + std::to_string(info.tp_degree) +
                     "+perseus+" + std::to_string(seq);
    if (info.job_metadata && !info.job_metadata->empty()) {
      id += "+" + SanitizeMetadata(*info.job_metadata);
    }
    return id;
  };
  json stored_info = ToJson(job->info);
  stored_info.erase("job_id");
  auto id =
      store_.CreateJob(make_id, stored_info.dump(), ToJson(job->planner).dump(), StateJson(*job));
  if (!id) return StoreFailed(id.error());
  job->info.job_id = *id;
  {
    std::unique_lock lock(mu_);
    jobs_[*id] = job;
    ++num_jobs_;
  }
  UpdateGauges();
  // Zeus returns the job id as a bare JSON string.
  return Ok(json(*id));
}

Reply JobRegistry::RegisterRank(const std::string& job_id, const RankInfo& info) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  const JobInfo& j = job->info;
  auto range = [](const char* name, int value, int limit) -> std::optional<std::string> {
    if (value < limit) return std::nullopt;
    return std::string(name) + " " + std::to_string(value) + " is out of range [0, " +
           std::to_string(limit) + ")";
  };
  for (auto problem :
       {range("rank", info.rank, j.world_size), range("dp_rank", info.dp_rank, j.dp_degree),
        range("pp_rank", info.pp_rank, j.pp_degree), range("tp_rank", info.tp_rank, j.tp_degree)}) {
    if (problem) return Fail(422, "job '" + job_id + "': " + *problem);
  }
  if (job->ranks[static_cast<size_t>(info.rank)]) {
    return Fail(
        409, "job '" + job_id + "': rank " + std::to_string(info.rank) + " is already registered");
  }
  for (const auto& other : job->ranks) {
    if (other && other->dp_rank == info.dp_rank && other->pp_rank == info.pp_rank &&
        other->tp_rank == info.tp_rank) {
      return Fail(409, "job '" + job_id + "': (dp_rank, pp_rank, tp_rank) = (" +
                           std::to_string(info.dp_rank) + ", " + std::to_string(info.pp_rank) +
                           ", " + std::to_string(info.tp_rank) +
                           ") is already registered by rank " + std::to_string(other->rank));
    }
  }
  if (auto s = job->CheckRankAgainstProfile(info); !s) {
    return Fail(422, "job '" + job_id + "': " + s.error().message);
  }
  if (auto s = store_.PutRank(job_id, info.rank, ToJson(info).dump()); !s) {
    return StoreFailed(s.error());
  }
  job->ranks[static_cast<size_t>(info.rank)] = info;
  ++job->num_registered;
  ++num_ranks_;
  UpdateGauges();
  return Ok(nullptr);
}

JobRegistry::Decision JobRegistry::Decide(Job& job, bool start_profiling) {
  Decision d;
  if (job.frontier_state == Job::FrontierState::kReady) {
    d.mode = Decision::Mode::kPlan;
    d.base_index = job.BaseIndex();
    d.base = job.PlanSchedules(d.base_index);
    d.for_non_stragglers = d.base;
    d.straggler_index = d.base_index;
    if (!job.stragglers.empty()) {
      d.straggler_time_s = job.StragglerTime(d.base_index);
      d.straggler_index = job.frontier->IndexForIterationTime(d.straggler_time_s);
      d.for_non_stragglers = job.PlanSchedules(d.straggler_index);
      for (const auto& [dp, s] : job.stragglers) d.straggler_dp.insert(dp);
    }
    return d;
  }
  if (job.planner.num_microbatches < 1) {
    d.mode = Decision::Mode::kError;
    d.error_status = 409;
    d.error = "job '" + job.info.job_id +
              "' has no num_microbatches: set it with PUT /v1/jobs/{job_id}/planner (or start "
              "the server with --microbatches)";
    return d;
  }
  if (!job.schedule) {
    auto schedule = BuildPipelineSchedule(job.planner.schedule, job.info.pp_degree,
                                          job.planner.num_microbatches);
    if (!schedule) {
      d.mode = Decision::Mode::kError;
      d.error_status = 409;
      d.error = schedule.error().message;
      return d;
    }
    job.schedule = std::move(*schedule);
  }
  if (job.profile || job.profiling.done) {
    d.mode = Decision::Mode::kAllMax;
    return d;
  }
  if (!job.profiling.active && start_profiling) {
    // Sweep the frequencies every rank declared, from the highest down.
    std::set<int> common;
    bool first = true;
    for (const auto& r : job.ranks) {
      if (!r) continue;
      std::set<int> declared;
      for (int f : r->available_frequencies) {
        if (f >= job.planner.profiling_min_freq_mhz) declared.insert(f);
      }
      if (first) {
        common = std::move(declared);
        first = false;
      } else {
        std::set<int> keep;
        std::set_intersection(common.begin(), common.end(), declared.begin(), declared.end(),
                              std::inserter(keep, keep.begin()));
        common = std::move(keep);
      }
    }
    if (common.empty()) {
      d.mode = Decision::Mode::kAllMax;
      return d;
    }
    job.profiling.active = true;
    job.profiling.freqs.assign(common.rbegin(), common.rend());
    job.profiling.step = 0;
    job.profiling.got.assign(job.ranks.size(), 0);
    job.profiling.got_count = 0;
  }
  if (job.profiling.active && job.profiling.step < job.profiling.freqs.size()) {
    d.mode = Decision::Mode::kProfiling;
    d.profiling_freq_mhz = job.profiling.freqs[job.profiling.step];
    return d;
  }
  d.mode = Decision::Mode::kAllMax;
  return d;
}

Reply JobRegistry::ScheduleReply(Job& job, const Decision& d, int rank) {
  const RankInfo& info = *job.ranks[static_cast<size_t>(rank)];
  std::string frequencies;
  switch (d.mode) {
    case Decision::Mode::kNone:
    case Decision::Mode::kError:
      return Fail(d.error_status == 0 ? 409 : d.error_status, d.error);
    case Decision::Mode::kPlan: {
      bool straggler_mode = !d.straggler_dp.empty() && !d.straggler_dp.count(info.dp_rank);
      const auto& plans = straggler_mode ? d.for_non_stragglers : d.base;
      frequencies = (*plans)[static_cast<size_t>(info.pp_rank)];
      break;
    }
    case Decision::Mode::kAllMax:
    case Decision::Mode::kProfiling: {
      int freq = d.mode == Decision::Mode::kProfiling
                     ? d.profiling_freq_mhz
                     : *std::max_element(info.available_frequencies.begin(),
                                         info.available_frequencies.end());
      std::vector<std::pair<InstructionKind, int>> entries;
      for (const Computation& c : (*job.schedule)[static_cast<size_t>(info.pp_rank)]) {
        entries.emplace_back(c.kind, freq);
      }
      frequencies = ScheduleText(entries);
      break;
    }
  }
  return Reply{200, "{\"rank\":" + std::to_string(rank) + ",\"frequencies\":" + frequencies + "}"};
}

void JobRegistry::CompleteRound(Job& job) {
  job.decision = Decide(job, /*start_profiling=*/true);
  ++job.round;
  std::fill(job.waiting.begin(), job.waiting.end(), 0);
  job.num_waiting = 0;
  // The round number is bookkeeping, not an acknowledged write: if this fails, the
  // ranks are still answered and the next successful write catches up.
  (void)store_.PutState(job.info.job_id, StateJson(job));
  job.cv.notify_all();
}

Reply JobRegistry::FetchSchedule(const std::string& job_id, int64_t rank) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::unique_lock lock(job->mu);
  if (rank >= job->info.world_size) {
    return Fail(422, "job '" + job_id + "': rank " + std::to_string(rank) +
                         " is out of range [0, " + std::to_string(job->info.world_size) + ")");
  }
  size_t r = static_cast<size_t>(rank);
  if (!job->ranks[r]) {
    return Fail(409, "job '" + job_id + "': rank " + std::to_string(rank) +
                         " has not registered; POST /register_rank/" + job_id + " first");
  }
  if (job->waiting[r]) {
    return Fail(409, "job '" + job_id + "': rank " + std::to_string(rank) +
                         " is already waiting for the schedule of round " +
                         std::to_string(job->round + 1));
  }
  if (shutting_down_) return Fail(503, "the server is shutting down");
  job->waiting[r] = 1;
  ++job->num_waiting;
  int64_t my_round = job->round;
  if (job->num_waiting == job->info.world_size) {
    CompleteRound(*job);
  } else {
    if (metrics_.long_polls_waiting().fetch_add(1) >= options_.max_long_polls) {
      metrics_.long_polls_waiting().fetch_sub(1);
      job->waiting[r] = 0;
      --job->num_waiting;
      return Fail(503, "too many schedule long polls are waiting (limit " +
                           std::to_string(options_.max_long_polls) +
                           ", --max-long-polls); retry later");
    }
    bool served = job->cv.wait_for(lock, options_.long_poll_timeout, [&] {
      return job->round != my_round || job->deleted || shutting_down_;
    });
    metrics_.long_polls_waiting().fetch_sub(1);
    if (job->deleted) return Fail(410, "job '" + job_id + "' was deleted while rank waited");
    if (!served || job->round == my_round) {
      job->waiting[r] = 0;
      --job->num_waiting;
      if (shutting_down_) return Fail(503, "the server is shutting down");
      std::string missing;
      int listed = 0;
      for (size_t i = 0; i < job->waiting.size() && listed < 16; ++i) {
        if (!job->waiting[i] && i != r) {
          missing += (listed++ ? ", " : "") + std::to_string(i);
        }
      }
      return Fail(504, "job '" + job_id + "': timed out after " +
                           std::to_string(options_.long_poll_timeout.count()) +
                           " ms waiting for every rank to ask for round " +
                           std::to_string(my_round + 1) + "; ranks not asking include: " + missing);
    }
  }
  return ScheduleReply(*job, job->decision, static_cast<int>(rank));
}

void JobRegistry::RecordProfilingResultLocked(Job& job, const ProfilingResult& result,
                                              Reply& reply) {
  auto& prof = job.profiling;
  if (!prof.active || prof.done || job.decision.mode != Decision::Mode::kProfiling ||
      prof.step >= prof.freqs.size() || prof.got[static_cast<size_t>(result.rank)]) {
    return;
  }
  int freq = prof.freqs[prof.step];
  auto mean = [](const std::map<std::string, std::vector<std::vector<double>>>& breakdown,
                 const char* key) -> std::optional<double> {
    auto it = breakdown.find(key);
    if (it == breakdown.end()) return std::nullopt;
    double sum = 0;
    size_t n = 0;
    for (const auto& iteration : it->second) {
      for (double v : iteration) {
        sum += v;
        ++n;
      }
    }
    if (n == 0) return std::nullopt;
    return sum / static_cast<double>(n);
  };
  auto ft = mean(result.time_breakdown, "forward");
  auto fe = mean(result.energy_breakdown, "forward");
  auto bt = mean(result.time_breakdown, "backward");
  auto be = mean(result.energy_breakdown, "backward");
  if (!ft || !fe || !bt || !be) {
    reply = Fail(422, "rank " + std::to_string(result.rank) + ": this round profiles " +
                          std::to_string(freq) +
                          " MHz; time_breakdown and energy_breakdown need non-empty 'forward' and "
                          "'backward' lists");
    return;
  }
  const RankInfo& info = *job.ranks[static_cast<size_t>(result.rank)];
  size_t r = static_cast<size_t>(result.rank);
  RankProfile p = job.rank_profiles[r].value_or(RankProfile{});
  p.rank = info.rank;
  p.dp_rank = info.dp_rank;
  p.pp_rank = info.pp_rank;
  p.tp_rank = info.tp_rank;
  p.forward_time[freq] = *ft;
  p.forward_energy[freq] = *fe;
  p.backward_time[freq] = *bt;
  p.backward_energy[freq] = *be;
  Job::Profiling saved = prof;
  prof.got[r] = 1;
  ++prof.got_count;
  bool step_done = prof.got_count == job.info.world_size;
  if (step_done) {
    ++prof.step;
    std::fill(prof.got.begin(), prof.got.end(), 0);
    prof.got_count = 0;
    if (prof.step >= prof.freqs.size()) prof.done = true;
  }
  if (auto s = store_.PutRankProfileAndState(job.info.job_id, result.rank, ToJson(p).dump(),
                                             StateJson(job));
      !s) {
    prof = saved;
    reply = StoreFailed(s.error());
    return;
  }
  if (!job.rank_profiles[r]) ++job.num_rank_profiles;
  job.rank_profiles[r] = std::move(p);
  if (prof.done) {
    auto aggregated = job.AggregateReceivedRankProfiles();
    if (!aggregated) {
      job.frontier_state = Job::FrontierState::kFailed;
      job.frontier_error = aggregated.error().message;
      return;
    }
    std::string stored = ProfileCsvText(aggregated->profile);
    Reply r2 = InstallProfileLocked(job, std::move(*aggregated), stored, "server_profiling");
    if (r2.status >= 300) {
      job.frontier_state = Job::FrontierState::kFailed;
      job.frontier_error = r2.body;
    }
  }
}

Reply JobRegistry::PostResult(const std::string& job_id, const ProfilingResult& result) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (result.rank >= job->info.world_size) {
    return Fail(422, "job '" + job_id + "': rank " + std::to_string(result.rank) +
                         " is out of range [0, " + std::to_string(job->info.world_size) + ")");
  }
  if (!job->ranks[static_cast<size_t>(result.rank)]) {
    return Fail(
        409, "job '" + job_id + "': rank " + std::to_string(result.rank) + " has not registered");
  }
  if (auto s = store_.PutResult(job_id, result.rank, ToJson(result).dump()); !s) {
    return StoreFailed(s.error());
  }
  if (!job->has_result[static_cast<size_t>(result.rank)]) {
    job->has_result[static_cast<size_t>(result.rank)] = 1;
    ++job->num_results;
  }
  Reply reply = Ok(nullptr);
  RecordProfilingResultLocked(*job, result, reply);
  return reply;
}

Reply JobRegistry::ListJobs() {
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
    entry["round"] = job->round;
    entry["frontier"] = FrontierStateName(static_cast<int>(job->frontier_state));
    out.push_back(entry);
  }
  json quarantined = json::array();
  for (const QuarantinedJob& q : quarantined_jobs()) {
    quarantined.push_back({{"job_id", q.job_id}, {"error", q.error}});
  }
  return Ok(json{{"jobs", out}, {"quarantined", quarantined}});
}

Reply JobRegistry::GetJob(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  json out = {
      {"job", ToJson(job->info)},
      {"planner", ToJson(job->planner)},
      {"ranks_registered", job->num_registered},
      {"rank_profiles", job->num_rank_profiles},
      {"ranks_with_results", job->num_results},
      {"round", job->round},
      {"ranks_waiting", job->num_waiting},
      {"profile_source", job->profile_source.empty() ? json(nullptr) : json(job->profile_source)},
      {"profile_warnings", ProfileWarningsJson(job->profile_warnings)},
      {"frontier", FrontierStateName(static_cast<int>(job->frontier_state))},
      {"selection", job->selection.ToJson()},
      {"state", json::parse(StateJson(*job))}};
  return Ok(out);
}

Reply JobRegistry::DeleteJob(const std::string& job_id) {
  std::shared_ptr<Job> job;
  {
    std::unique_lock lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) {
      if (quarantined_.count(job_id) == 0) return NoJob(job_id);
      if (auto s = store_.DeleteJob(job_id); !s) return StoreFailed(s.error());
      quarantined_.erase(job_id);
      return Ok(json{{"deleted", job_id}});
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
    job->cv.notify_all();
  }
  UpdateGauges();
  return Ok(json{{"deleted", job_id}});
}

void JobRegistry::SubmitFrontierLocked(Job& job) {
  ++job.frontier_generation;
  job.frontier_state = Job::FrontierState::kComputing;
  job.frontier_error.clear();
  job.frontier.reset();
  job.plan_cache.clear();
  if (job.planner.num_microbatches < 1) {
    job.frontier_state = Job::FrontierState::kFailed;
    job.frontier_error = "num_microbatches is not set; PUT /v1/jobs/{job_id}/planner";
    return;
  }
  worker_->Submit(FrontierTask{job.info.job_id, job.frontier_generation, job.profile,
                               job.planner.ToPlannerOptions()});
}

Reply JobRegistry::SetProfileLocked(Job& job, const std::string& csv, const std::string& source) {
  auto read = ParseProfileCsvWithWarnings(csv, "job " + job.info.job_id + " profile", job.info.pp_degree);
  if (!read) return Fail(422, read.error().message);
  return InstallProfileLocked(job, std::move(*read), csv, source);
}

Reply JobRegistry::InstallProfileLocked(Job& job, AggregatedProfile profile, const std::string& stored_csv,
                                        const std::string& source) {
  if (profile.profile.num_stages() != job.info.pp_degree) {
    return Fail(422, "the profile has " + std::to_string(profile.profile.num_stages()) +
                         " stages but the job's pp_degree is " +
                         std::to_string(job.info.pp_degree));
  }
  auto parsed = std::make_shared<Profile>(std::move(profile.profile));
  std::shared_ptr<const Profile> previous = job.profile;
  job.profile = parsed;
  for (const auto& r : job.ranks) {
    if (!r) continue;
    if (auto s = job.CheckRankAgainstProfile(*r); !s) {
      job.profile = previous;
      return Fail(422, s.error().message);
    }
  }
  if (auto s = store_.PutProfile(job.info.job_id, stored_csv, source, ToJson(job.planner).dump()); !s) {
    job.profile = previous;
    return StoreFailed(s.error());
  }
  job.profile_source = source;
  job.profile_warnings = std::move(profile.dropped);
  SubmitFrontierLocked(job);
  return Reply{
      202, json{{"job_id", job.info.job_id}, {"frontier", "computing"}, {"profile_source", source}}
               .dump()};
}

Reply JobRegistry::SetPlanner(const std::string& job_id, const PlannerSettings& planner) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (auto refused = CheckPipelineLimits(job->info, planner)) return *refused;
  if (auto s = store_.PutPlanner(job_id, ToJson(planner).dump()); !s) return StoreFailed(s.error());
  job->planner = planner;
  job->schedule.reset();
  if (job->profile) SubmitFrontierLocked(*job);
  return Ok(json{{"planner", ToJson(planner)},
                 {"frontier", FrontierStateName(static_cast<int>(job->frontier_state))}});
}

Reply JobRegistry::UploadProfile(const std::string& job_id, const ProfileUpload& upload) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (upload.planner) {
    if (auto refused = CheckPipelineLimits(job->info, *upload.planner)) return *refused;
  }
  PlannerSettings saved = job->planner;
  if (upload.planner) {
    job->planner = *upload.planner;
    job->schedule.reset();
  }
  Reply reply = SetProfileLocked(*job, upload.csv, "csv");
  if (reply.status >= 300) job->planner = saved;
  return reply;
}

Reply JobRegistry::UploadRankProfile(const std::string& job_id, const RankProfile& profile) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (profile.rank >= job->info.world_size) {
    return Fail(422, "job '" + job_id + "': rank " + std::to_string(profile.rank) +
                         " is out of range [0, " + std::to_string(job->info.world_size) + ")");
  }
  const auto& registered = job->ranks[static_cast<size_t>(profile.rank)];
  if (!registered) {
    return Fail(409, "job '" + job_id + "': rank " + std::to_string(profile.rank) +
                         " has not registered; register it before uploading its profile");
  }
  if (registered->dp_rank != profile.dp_rank || registered->pp_rank != profile.pp_rank ||
      registered->tp_rank != profile.tp_rank) {
    return Fail(422, "rank " + std::to_string(profile.rank) +
                         ": dp/pp/tp ranks differ from the ones it registered with");
  }
  std::set<int> declared(registered->available_frequencies.begin(),
                         registered->available_frequencies.end());
  for (const auto* m : {&profile.forward_time, &profile.backward_time}) {
    for (const auto& [f, v] : *m) {
      if (!declared.count(f)) {
        return Fail(422, "rank " + std::to_string(profile.rank) + ": frequency " +
                             std::to_string(f) + " MHz is not one the rank declared");
      }
    }
  }
  if (auto s = store_.PutRankProfile(job_id, profile.rank, ToJson(profile).dump()); !s) {
    return StoreFailed(s.error());
  }
  auto& slot = job->rank_profiles[static_cast<size_t>(profile.rank)];
  if (!slot) ++job->num_rank_profiles;
  slot = profile;
  json out = {{"rank_profiles", job->num_rank_profiles}, {"world_size", job->info.world_size}};
  if (job->num_rank_profiles == job->info.world_size) {
    auto aggregated = job->AggregateReceivedRankProfiles();
    if (!aggregated) return Fail(422, aggregated.error().message);
    std::string stored = ProfileCsvText(aggregated->profile);
    Reply reply = InstallProfileLocked(*job, std::move(*aggregated), stored, "rank_profiles");
    if (reply.status >= 300) return reply;
    out["frontier"] = "computing";
    out["profile_warnings"] = ProfileWarningsJson(job->profile_warnings);
  }
  return Ok(out);
}

Reply JobRegistry::ComputeFrontierNow(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (job->profile) {
    SubmitFrontierLocked(*job);
    return Reply{202, json{{"frontier", "computing"}}.dump()};
  }
  if (job->num_rank_profiles == 0) {
    return Fail(409, "job '" + job_id +
                         "' has no profile: upload one (PUT /v1/jobs/{job_id}/profile "
                         "or POST /v1/jobs/{job_id}/rank_profiles)");
  }
  auto aggregated = job->AggregateReceivedRankProfiles();
  if (!aggregated) return Fail(422, aggregated.error().message);
  std::string stored = ProfileCsvText(aggregated->profile);
  return InstallProfileLocked(*job, std::move(*aggregated), stored, "rank_profiles");
}

bool JobRegistry::OnFrontierStarted(const FrontierTask& task) {
  auto job = Find(task.job_id);
  if (!job) return false;
  std::lock_guard lock(job->mu);
  if (job->frontier_generation != task.generation || job->deleted) return false;
  // Written before the work: if the planner takes the process down, the next start knows.
  ++job->frontier_attempts;
  (void)store_.PutState(task.job_id, StateJson(*job));
  return true;
}

void JobRegistry::OnFrontierDone(const FrontierTask& task, Result<Frontier> frontier,
                                 double seconds) {
  metrics_.RecordFrontier(frontier.ok(), seconds);
  auto job = Find(task.job_id);
  if (!job) return;
  std::lock_guard lock(job->mu);
  if (job->deleted) return;
  // The computation ended (either way): the interrupted ones before it were not in a row.
  if (job->frontier_attempts != 0) {
    job->frontier_attempts = 0;
    (void)store_.PutState(task.job_id, StateJson(*job));
  }
  if (job->frontier_generation != task.generation) return;
  job->frontier_seconds = seconds;
  if (!frontier) {
    job->frontier_state = Job::FrontierState::kFailed;
    job->frontier_error = frontier.error().message;
    json summary = {{"error", job->frontier_error}};
    (void)store_.PutFrontierSummary(task.job_id,
                                    summary.dump(-1, ' ', false, json::error_handler_t::replace));
    return;
  }
  if (frontier->points().empty()) {
    job->frontier_state = Job::FrontierState::kFailed;
    job->frontier_error = "the planner returned an empty frontier";
    return;
  }
  job->frontier = std::make_shared<const Frontier>(std::move(*frontier));
  job->frontier_state = Job::FrontierState::kReady;
  job->plan_cache.clear();
  const auto& points = job->frontier->points();
  size_t fastest = job->frontier->fastest_index();
  size_t min_energy = job->frontier->min_energy_index();
  (void)store_.PutFrontierSummary(task.job_id,
                                  json{{"num_points", points.size()},
                                       {"fastest_time_s", points[fastest].time_s},
                                       {"fastest_energy_j", points[fastest].energy_j},
                                       {"min_energy_time_s", points[min_energy].time_s},
                                       {"min_energy_j", points[min_energy].energy_j},
                                       {"compute_seconds", seconds}}
                                      .dump());
}

Reply JobRegistry::FrontierStatus(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  json out = {{"state", FrontierStateName(static_cast<int>(job->frontier_state))}};
  if (job->frontier_state == Job::FrontierState::kFailed) out["error"] = job->frontier_error;
  if (job->frontier_state == Job::FrontierState::kReady) {
    const auto& points = job->frontier->points();
    auto point = [&](size_t i) {
      return json{{"index", i}, {"time_s", points[i].time_s}, {"energy_j", points[i].energy_j}};
    };
    out["num_points"] = points.size();
    out["fastest"] = point(job->frontier->fastest_index());
    out["min_energy"] = point(job->frontier->min_energy_index());
    out["selected"] = point(job->BaseIndex());
    out["compute_seconds"] = job->frontier_seconds;
  }
  return Ok(out);
}

Reply JobRegistry::FrontierPoints(const std::string& job_id, int64_t offset, int64_t limit) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (job->frontier_state != Job::FrontierState::kReady) {
    return Fail(409,
                "job '" + job_id + "': the frontier is " +
                    FrontierStateName(static_cast<int>(job->frontier_state)) +
                    (job->frontier_state == Job::FrontierState::kFailed ? ": " + job->frontier_error
                                                                        : std::string()));
  }
  const auto& points = job->frontier->points();
  limit = std::min<int64_t>(limit, 10000);
  json list = json::array();
  for (int64_t i = offset; i < static_cast<int64_t>(points.size()) && i < offset + limit; ++i) {
    const FrontierPoint& p = points[static_cast<size_t>(i)];
    list.push_back({{"index", i},
                    {"duration_units", p.duration_units},
                    {"time_s", p.time_s},
                    {"energy_j", p.energy_j},
                    {"effective_energy_j", p.effective_energy_j}});
  }
  return Ok(json{{"total", points.size()}, {"offset", offset}, {"points", list}});
}

Reply JobRegistry::SelectPlan(const std::string& job_id, const PlanSelection& selection) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (selection.kind == PlanSelection::Kind::kIndex && job->frontier &&
      static_cast<size_t>(selection.value) >= job->frontier->points().size()) {
    return Fail(422, "index " + std::to_string(static_cast<int64_t>(selection.value)) +
                         " is out of range [0, " + std::to_string(job->frontier->points().size()) +
                         ")");
  }
  PlanSelection saved = job->selection;
  job->selection = selection;
  if (auto s = store_.PutState(job_id, StateJson(*job)); !s) {
    job->selection = saved;
    return StoreFailed(s.error());
  }
  json out = {{"selection", selection.ToJson()}};
  if (job->frontier) {
    size_t i = job->BaseIndex();
    out["index"] = i;
    out["time_s"] = job->frontier->points()[i].time_s;
    out["energy_j"] = job->frontier->points()[i].energy_j;
  }
  return Ok(out);
}

Reply JobRegistry::ListStragglers(const std::string& job_id) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  json out = json::parse(StateJson(*job));
  json reply = {{"stragglers", out["stragglers"]}};
  if (job->frontier && !job->stragglers.empty()) {
    size_t base = job->BaseIndex();
    double t = job->StragglerTime(base);
    reply["iteration_time_s"] = t;
    reply["non_straggler_index"] = job->frontier->IndexForIterationTime(t);
  }
  return Ok(reply);
}

Reply JobRegistry::ReportStraggler(const std::string& job_id, const StragglerReport& report) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  {
    std::lock_guard lock(job->mu);
    if (report.dp_rank >= job->info.dp_degree) {
      return Fail(422, "dp_rank " + std::to_string(report.dp_rank) + " is out of range [0, " +
                           std::to_string(job->info.dp_degree) + ")");
    }
    auto saved = job->stragglers;
    if (report.kind == StragglerReport::Kind::kRecovered) {
      job->stragglers.erase(report.dp_rank);
    } else {
      job->stragglers[report.dp_rank] = Job::Straggler{report.kind, report.value};
    }
    if (auto s = store_.PutState(job_id, StateJson(*job)); !s) {
      job->stragglers = saved;
      return StoreFailed(s.error());
    }
  }
  return ListStragglers(job_id);
}

Reply JobRegistry::PreviewSchedule(const std::string& job_id, int64_t rank) {
  auto job = Find(job_id);
  if (!job) return MissingJob(job_id);
  std::lock_guard lock(job->mu);
  if (rank >= job->info.world_size) {
    return Fail(422, "rank " + std::to_string(rank) + " is out of range [0, " +
                         std::to_string(job->info.world_size) + ")");
  }
  if (!job->ranks[static_cast<size_t>(rank)]) {
    return Fail(409, "rank " + std::to_string(rank) + " has not registered");
  }
  Decision d = Decide(*job, /*start_profiling=*/false);
  Reply reply = ScheduleReply(*job, d, static_cast<int>(rank));
  if (reply.status != 200) return reply;
  json body = json::parse(reply.body);
  static const char* const kModes[] = {"none", "all_max", "profiling", "plan", "error"};
  body["mode"] = kModes[static_cast<int>(d.mode)];
  body["round"] = job->round + 1;
  if (d.mode == Decision::Mode::kPlan) {
    const RankInfo& info = *job->ranks[static_cast<size_t>(rank)];
    bool slowed = !d.straggler_dp.empty() && !d.straggler_dp.count(info.dp_rank);
    body["plan_index"] = slowed ? d.straggler_index : d.base_index;
  }
  return Ok(body);
}

}  // namespace wattcut::server
