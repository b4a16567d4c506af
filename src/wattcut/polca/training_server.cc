#include "wattcut/polca/training_server.h"

#include <algorithm>
#include <cmath>

#include "wattcut/base/printable_text.h"

namespace wattcut::polca {

std::string TrainingControlName(TrainingControl control) {
  return control == TrainingControl::kLocks ? "locks" : "power-target";
}

Result<TrainingControl> ParseTrainingControl(const std::string& name) {
  if (name == "locks") return TrainingControl::kLocks;
  if (name == "power-target") return TrainingControl::kPowerTarget;
  return Error{"unknown training control '" + PrintableText(name) + "' (expected locks or power-target)"};
}

double TrainingTimeline::average_server_w() const {
  double energy_j = 0;
  double start = 0;
  for (size_t i = 0; i < step_end_s.size(); ++i) {
    energy_j += server_w[i] * (step_end_s[i] - start);
    start = step_end_s[i];
  }
  return start > 0 ? energy_j / start : 0;
}

Status ValidateTimeline(const TrainingTimeline& t) {
  if (t.step_end_s.empty() || t.step_end_s.size() != t.server_w.size()) {
    return Error{"training timeline '" + t.name + "': expected one power per step and at least one step"};
  }
  double before = 0;
  for (size_t i = 0; i < t.step_end_s.size(); ++i) {
    if (!(t.step_end_s[i] > before) || !std::isfinite(t.step_end_s[i])) {
      return Error{"training timeline '" + t.name + "': step " + std::to_string(i) + " does not end after it starts"};
    }
    if (!(t.server_w[i] >= 0) || !std::isfinite(t.server_w[i])) {
      return Error{"training timeline '" + t.name + "': step " + std::to_string(i) + ": power must be >= 0"};
    }
    before = t.step_end_s[i];
  }
  return Status::Ok();
}

TrainingServer::TrainingServer(const TrainingTimeline* plan, double phase) : running_plan_(plan), start_phase_(phase) {
  StartAt(*plan, phase, 0);
}

void TrainingServer::HandleEvent(double t_s) {
  if (++step_ < running().step_end_s.size()) return;
  ++completed_;
  iteration_start_s_ = t_s;
  if (pending_ != nullptr && --boundaries_left_ <= 0) {
    running_plan_ = pending_;
    pending_ = nullptr;
  }
  step_ = 0;
}

void TrainingServer::SetPlan(const TrainingTimeline* plan, int boundaries) {
  if (plan == running_plan_) {
    pending_ = nullptr;
    return;
  }
  pending_ = plan;
  boundaries_left_ = std::max(1, boundaries);
}

void TrainingServer::StartAt(const TrainingTimeline& timeline, double fraction_done, double t_s) {
  const double done_s = fraction_done * timeline.iteration_s();
  iteration_start_s_ = t_s - done_s;
  step_ = static_cast<size_t>(std::upper_bound(timeline.step_end_s.begin(), timeline.step_end_s.end(), done_s) -
                              timeline.step_end_s.begin());
  // At the very end of the iteration: its last step, which ends now.
  step_ = std::min(step_, timeline.step_end_s.size() - 1);
}

void TrainingServer::SetClockLimit(const TrainingTimeline* limit, double t_s) {
  if (limit == limit_) return;
  const double fraction_done = std::clamp((t_s - iteration_start_s_) / running().iteration_s(), 0.0, 1.0);
  limit_ = limit;
  StartAt(running(), fraction_done, t_s);
}

double TrainingServer::IterationsDone(double t_s) const {
  return static_cast<double>(completed_) + (t_s - iteration_start_s_) / running().iteration_s() - start_phase_;
}

}  // namespace wattcut::polca
