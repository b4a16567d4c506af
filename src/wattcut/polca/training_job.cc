#include "wattcut/polca/training_job.h"

#include <algorithm>
#include <cmath>

#include "wattcut/base/general_text.h"
#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/emulate/power_sweep.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::polca {

const TrainingTimeline& TrainingJob::PlanFor(double target_w, bool* met) const {
  size_t lowest = 0;
  for (size_t i = 0; i < plans.size(); ++i) {  // fastest first
    if (plans[i].peak_power_per_gpu_w <= target_w) {
      if (met != nullptr) *met = true;
      return plans[i];
    }
    if (plans[i].peak_power_per_gpu_w < plans[lowest].peak_power_per_gpu_w) lowest = i;
  }
  if (met != nullptr) *met = false;
  return plans[lowest];
}

const TrainingTimeline* TrainingJob::LockFor(double freq_mhz, double cap_w) const {
  if (freq_mhz >= locks.back().freq_mhz && !(cap_w > 0)) return nullptr;
  const TrainingTimeline* chosen = &locks.front();
  for (const TrainingTimeline& lock : locks) {  // lowest clock first
    if (lock.freq_mhz > freq_mhz) break;
    if (cap_w > 0 && lock.peak_power_per_gpu_w > cap_w) break;
    chosen = &lock;
  }
  return chosen;
}

TrainingTimeline ServerTimeline(const std::string& name, const PowerTimeline& pipeline, double peak_pipeline_w,
                                int stages, int tensor_parallel, const ServerSpec& server, double step_s) {
  TrainingTimeline out;
  out.name = name;
  out.peak_power_per_gpu_w = peak_pipeline_w / stages;
  const double end = pipeline.time_s.empty() ? 0 : pipeline.time_s.back();
  const auto to_server = [&](double pipeline_w) {
    return server.other_idle_w + pipeline_w * tensor_parallel * (1 + server.other_w_per_gpu_w);
  };
  // Energy of the pipeline's step function between two times, walking the steps once.
  size_t j = 0;
  double bin_start = 0;
  while (bin_start < end) {
    const double bin_end = std::min(end, bin_start + step_s);
    double energy_j = 0;
    while (j < pipeline.power_w.size() && pipeline.time_s[j] < bin_end) {
      const double from = std::max(bin_start, pipeline.time_s[j]);
      const double to = std::min(bin_end, pipeline.time_s[j + 1]);
      if (to > from) energy_j += pipeline.power_w[j] * (to - from);
      if (pipeline.time_s[j + 1] > bin_end) break;  // the step goes on into the next bin
      ++j;
    }
    if (bin_end > bin_start) {
      out.step_end_s.push_back(bin_end);
      out.server_w.push_back(to_server(energy_j / (bin_end - bin_start)));
    }
    bin_start = bin_end;
  }
  return out;
}

namespace {

std::string Where(const PolcaConfig& config) { return "training.profile " + config.training.profile + ": "; }

}  // namespace

Result<TrainingJob> BuildTrainingJob(const PolcaConfig& config) {
  const TrainingSpec& spec = config.training;
  if (spec.profile.empty()) {
    return Error{"row.training_share = " + GeneralText(config.row.training_share) +
                 " needs the training job's stage profile: set training.profile (or --training-profile)"};
  }
  Result<Profile> profile = ReadProfileCsv(spec.profile, spec.stages);
  if (!profile.ok()) return Error{Where(config) + profile.error().message};
  Result<PipelineScheduleKind> schedule = ParsePipelineSchedule(spec.schedule);
  if (!schedule.ok()) return Error{"training.schedule: " + schedule.error().message};
  PlannerOptions options;
  options.num_microbatches = spec.microbatches;
  options.schedule = *schedule;
  options.unit_time_s = spec.unit_time_s;
  options.p2p_power_w = spec.p2p_power_w;
  Result<PlanningProblem> planning = BuildPlanningProblem(*profile, options);
  if (!planning.ok()) return Error{Where(config) + planning.error().message};
  Result<Frontier> frontier = ComputeFrontierWithPeakPowers(*profile, options);
  if (!frontier.ok()) return Error{Where(config) + frontier.error().message};
  Result<ClockTimelines> clocks = UniformLockTimelines(*profile, *planning, kPeakPowerWindowS);
  if (!clocks.ok()) return Error{Where(config) + clocks.error().message};
  if (clocks->uniform_lock.empty()) return Error{Where(config) + "no clock is measured for every computation"};
  Result<FrontierPower> power = FrontierPower::Create(*frontier, planning->problem);
  if (!power.ok()) return Error{Where(config) + power.error().message};

  TrainingJob job;
  job.stages = PipelineDevices(*profile, options);
  job.tensor_parallel = config.server.gpus / job.stages;
  job.description = spec.profile + ", " + std::to_string(job.stages) + " stages x " +
                    std::to_string(spec.microbatches) + " microbatches, " + spec.schedule + ", " +
                    std::to_string(job.tensor_parallel) + " GPU(s) per stage";
  const double step_s = spec.timeline_step_s;
  auto server_timeline = [&](const std::string& name, const ClockTimeline& c) {
    TrainingTimeline t =
        ServerTimeline(name, c.timeline, c.peak_power_w, job.stages, job.tensor_parallel, config.server, step_s);
    t.freq_mhz = c.freq_mhz;
    return t;
  };
  job.all_max = server_timeline("AllMax", clocks->all_max);
  for (auto it = clocks->uniform_lock.rbegin(); it != clocks->uniform_lock.rend(); ++it) {
    job.locks.push_back(server_timeline(std::to_string(it->freq_mhz) + " MHz", *it));
  }
  if (!clocks->skipped_clocks_mhz.empty()) {
    std::string list;
    for (int clock : clocks->skipped_clocks_mhz) list += (list.empty() ? "" : ", ") + std::to_string(clock);
    job.warnings.push_back(Where(config) +
                           "locks leave out clocks some stage and instruction did not measure: " + list + " MHz");
  }
  const double lowest_mhz = job.locks.front().freq_mhz, highest_mhz = job.locks.back().freq_mhz;
  if (highest_mhz != config.gpu.max_freq_mhz || lowest_mhz > config.policy.t2_low_mhz) {
    job.warnings.push_back(Where(config) + "the profile's clocks (" + GeneralText(lowest_mhz) + " to " +
                           GeneralText(highest_mhz) + " MHz) are not the GPU's (gpu.max_freq_mhz " +
                           GeneralText(config.gpu.max_freq_mhz) + ", policy.t2_low_mhz " +
                           GeneralText(config.policy.t2_low_mhz) +
                           "): a lock at f runs the profile's largest clock <= f, the lowest below them, none above");
  }

  // The frontier's answers: the fastest plan, each target's plan, the lowest-peak plan.
  const size_t n = frontier->points().size();
  size_t lowest = frontier->fastest_index();
  for (size_t i = 0; i < n; ++i) {
    if (*PeakPowerPerGpuW(*frontier, i) < *PeakPowerPerGpuW(*frontier, lowest)) lowest = i;
  }
  std::vector<size_t> indices = {frontier->fastest_index()};
  job.targets_w = {config.policy.t1_training_w, config.policy.t2_training_w};
  for (double target : job.targets_w) {
    Result<size_t> found = PointForPeakPowerPerGpu(*frontier, target);
    indices.push_back(found.ok() ? *found : lowest);
    job.target_met.push_back(found.ok());
  }
  indices.push_back(lowest);
  std::vector<size_t> unique = indices;
  // Fastest first: the frontier is in order of time, slowest first.
  std::sort(unique.begin(), unique.end(), std::greater<>());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  for (size_t index : unique) {
    Result<PowerTimeline> timeline = power->Timeline(frontier->DurationsAt(index));
    if (!timeline.ok()) return Error{Where(config) + timeline.error().message};
    const FrontierPoint& p = frontier->points()[index];
    job.plans.push_back(ServerTimeline("plan " + std::to_string(index), *timeline, *p.peak_1s_power_w, job.stages,
                                       job.tensor_parallel, config.server, step_s));
  }
  auto plan_of = [&](size_t index) {
    return static_cast<size_t>(std::find(unique.begin(), unique.end(), index) - unique.begin());
  };
  job.fastest_plan = plan_of(indices.front());
  for (size_t k = 0; k < job.targets_w.size(); ++k) job.target_plan.push_back(plan_of(indices[k + 1]));
  for (const TrainingTimeline& t : job.plans) {
    if (Status s = ValidateTimeline(t); !s.ok()) return s.error();
  }
  return job;
}

}  // namespace wattcut::polca
