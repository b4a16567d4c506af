#include "wattcut/server/energy_saving.h"

#include <algorithm>

#include "wattcut/plan/all_max.h"
#include "wattcut/profile/chunk_split.h"

namespace wattcut::server {

std::optional<AllMaxPoint> AllMaxReference(const Profile& per_device_profile, const Frontier& frontier,
                                           int virtual_stages) {
  const PipelineSchedule& schedule = frontier.setup().schedule;
  if (schedule.empty() || per_device_profile.num_stages() != static_cast<int>(schedule.size())) return std::nullopt;
  std::optional<Profile> chunks;
  if (virtual_stages > 1) {
    Result<Profile> repeated = RepeatDeviceRowsPerChunk(per_device_profile, virtual_stages);
    if (!repeated.ok()) return std::nullopt;
    chunks = std::move(*repeated);
  }
  const Profile& profile = chunks ? *chunks : per_device_profile;
  if (profile.num_stages() != static_cast<int>(schedule.size()) * ScheduleChunks(schedule)) return std::nullopt;
  // At the frontier's fastest time, as `wattcut frontier` and `wattcut emulate` report it: every
  // computation at its highest clock is the fastest plan's timing, in the planner's units.
  if (frontier.points().empty()) return std::nullopt;
  AllMaxPoint point;
  point.time_s = frontier.points()[frontier.fastest_index()].time_s;
  point.energy_j = AllMaxEnergy(profile, schedule, point.time_s, frontier.setup().p2p_power_w);
  return point;
}

std::optional<double> StepEnergyJ(const Frontier& frontier, const std::optional<AllMaxPoint>& all_max,
                                  const DeploymentTarget& target, int dp_degree, int tp_degree) {
  if (!target.plan) {
    if (!all_max) return std::nullopt;
    return all_max->energy_j * dp_degree * tp_degree;
  }
  const auto& points = frontier.points();
  if (target.base_index >= points.size() || target.non_straggler_index >= points.size()) return std::nullopt;
  const double base_j = points[target.base_index].energy_j;
  double pipelines_j = base_j * dp_degree;
  if (!target.straggler_dp.empty()) {
    const auto stragglers = std::count_if(target.straggler_dp.begin(), target.straggler_dp.end(),
                                          [dp_degree](int dp) { return dp >= 0 && dp < dp_degree; });
    const double others_j = points[target.non_straggler_index].energy_j;
    pipelines_j = base_j * static_cast<double>(stragglers) + others_j * static_cast<double>(dp_degree - stragglers);
  }
  return pipelines_j * tp_degree;
}

double StepSavingJ(const Frontier& frontier, const AllMaxPoint& all_max, const DeploymentTarget& target, int dp_degree,
                   int tp_degree) {
  if (!target.plan) return 0;
  const std::optional<double> used_j = StepEnergyJ(frontier, all_max, target, dp_degree, tp_degree);
  if (!used_j) return 0;
  return *StepEnergyJ(frontier, all_max, DeploymentTarget{}, dp_degree, tp_degree) - *used_j;
}

void EnergySavingTally::Count(int64_t steps, const StepRate& rate) {
  if (steps <= 0) return;
  saved_j_ += rate.saving_j * static_cast<double>(steps);
  counted_steps_ += steps;
  if (rate.is_plan) plan_steps_ += steps;
  if (rate.energy_j) {
    estimated_j_ += *rate.energy_j * static_cast<double>(steps);
    estimated_steps_ += steps;
  }
}

void EnergySavingTally::Advance(int64_t job_step, const StepRate& rate, int64_t from_step) {
  if (!counted_through_ || job_step < *counted_through_) {
    counted_through_ = job_step;
    if (job_step >= from_step) previous_ = rate;
    return;
  }
  const int64_t begin = *counted_through_;
  // Steps [begin, from_step) ran the target before this one; [from_step, job_step) this one.
  if (begin < from_step) Count(std::min(job_step, from_step) - begin, previous_);
  Count(job_step - std::max(begin, from_step), rate);
  counted_through_ = job_step;
  if (job_step >= from_step) previous_ = rate;
}

}  // namespace wattcut::server
