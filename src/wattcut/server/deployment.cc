#include "wattcut/server/deployment.h"

#include <algorithm>
#include <cmath>

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

double StepProgress::steps_per_s() const {
  double best = 0;
  for (size_t i = 0; i < latest_.size(); ++i) {
    const double span_s = latest_[i].time_s - first_[i].time_s;
    if (!latest_[i].set || span_s < 1) continue;
    best = std::max(best, static_cast<double>(latest_[i].step - first_[i].step) / span_s);
  }
  return best > 0 ? best : fallback_steps_per_s_;
}

int64_t StepProgress::ApplyStep(double lead_s) const {
  // Twice the fastest rank's measured rate: the rate is an average since its first report,
  // and steps get faster when a job leaves its profiling iterations (at low clocks).
  return max_step() + 1 + static_cast<int64_t>(std::ceil(2 * steps_per_s() * lead_s));
}

}  // namespace wattcut::server
