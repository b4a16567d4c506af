#include "wattcut/server/deployment.h"

#include <algorithm>
#include <cmath>

#include "wattcut/plan/plan_lookup.h"

namespace wattcut::server {

DeploymentTarget DeploymentTarget::From(const ScheduleDecision& decision, uint64_t frontier_generation) {
  DeploymentTarget target;
  if (decision.mode != ScheduleDecision::Mode::kPlan) return target;
  target.plan = true;
  target.frontier_generation = frontier_generation;
  target.base_index = decision.base_index;
  target.non_straggler_index = decision.non_straggler_index;
  target.straggler_dp = decision.straggler_dp;
  return target;
}

PowerCapPoint PointForPowerTarget(const Frontier& frontier, const PowerTarget& target) {
  PowerCapPoint cap;
  bool by_peak = target.kind == PowerTarget::Kind::kPeak1s;
  Result<size_t> found =
      by_peak ? PointForPeakPowerPerGpu(frontier, target.per_gpu_w) : PointForPowerPerGpu(frontier, target.per_gpu_w);
  if (by_peak && !found && found.error().code == ErrorCode::kNotFound) {
    // No peak powers on this frontier: the average power decides, and the answer says so.
    cap.decided_by_target_kind = false;
    cap.note = found.error().message + "; the average power per GPU decided instead";
    by_peak = false;
    found = PointForPowerPerGpu(frontier, target.per_gpu_w);
  }
  auto power = [&](size_t i) {
    return by_peak ? PeakPowerPerGpuW(frontier, i).value_or(0.0) : AveragePowerPerGpuW(frontier, i);
  };
  if (found) {
    cap.index = *found;
    cap.met = true;
    cap.power_per_gpu_w = power(cap.index);
    return cap;
  }
  // Not met: the lowest-power point (the fastest among equals).
  size_t lowest = frontier.fastest_index();
  for (size_t i = frontier.points().size(); i-- > 0;) {
    if (power(i) < power(lowest)) lowest = i;
  }
  cap.index = lowest;
  cap.power_per_gpu_w = power(lowest);
  cap.note = cap.note.empty() ? found.error().message : cap.note + "; " + found.error().message;
  return cap;
}

void CapDecision(ScheduleDecision& decision, size_t cap_index) {
  if (decision.mode != ScheduleDecision::Mode::kPlan) return;
  decision.base_index = std::min(decision.base_index, cap_index);
  decision.non_straggler_index = std::min(decision.non_straggler_index, cap_index);
}

double DeploymentPollIntervalS(int world_size) {
  return std::clamp(static_cast<double>(world_size) / 2000.0, 0.5, 30.0);
}

double DeploymentLeadS(int world_size) { return 2 * DeploymentPollIntervalS(world_size) + 1; }

void StepProgress::Report(size_t rank, int64_t step, double now_s) {
  if (rank >= latest_.size()) return;
  if (!first_[rank].set || step < latest_[rank].step)
    first_[rank] = {true, step, now_s};  // a restarted rank starts over
  latest_[rank] = {true, step, now_s};
}

int64_t StepProgress::max_step() const {
  int64_t best = 0;
  for (const StepReport& r : latest_) {
    if (r.set) best = std::max(best, r.step);
  }
  return best;
}

std::optional<int64_t> StepProgress::min_step() const {
  if (latest_.empty()) return std::nullopt;
  int64_t least = latest_.front().step;
  for (const StepReport& r : latest_) {
    if (!r.set) return std::nullopt;
    least = std::min(least, r.step);
  }
  return least;
}

double StepProgress::steps_per_s() const {
  double best = 0;
  for (size_t i = 0; i < latest_.size(); ++i) {
    const double span_s = latest_[i].time_s - first_[i].time_s;
    if (!latest_[i].set || span_s < 1) continue;
    best = std::max(best, static_cast<double>(latest_[i].step - first_[i].step) / span_s);
  }
  return best > 0 ? best : fallback_steps_per_s_;
}

Status CheckTrainingStep(int64_t step, const std::string& what) {
  if (step >= 0 && step <= kMaxTrainingStep) return Status::Ok();
  return Error::InvalidArgument(what + ": " + std::to_string(step) + " is outside [0, " +
                                std::to_string(kMaxTrainingStep) + "] (2^50 steps)");
}

int64_t StepProgress::ApplyStep(double lead_s) const {
  // Twice the fastest rank's measured rate: the rate is an average since its first report,
  // and steps get faster when a job leaves its profiling iterations (at low clocks). A rate
  // from a wild report (or a stored one) cannot carry the sum past int64_t: the steps ahead are
  // bounded as reported steps are.
  const double ahead = std::ceil(2 * steps_per_s() * lead_s);
  const bool bounded = ahead >= 0 && ahead <= static_cast<double>(kMaxTrainingStep);
  return std::min(max_step(), kMaxTrainingStep) + 1 + (bounded ? static_cast<int64_t>(ahead) : kMaxTrainingStep);
}

}  // namespace wattcut::server
