#include "wattcut/row_control/training_targets.h"

#include <algorithm>
#include <utility>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"

namespace wattcut::row_control {

const char* TrainingStateName(TrainingState state) {
  switch (state) {
    case TrainingState::kNone:
      return "none";
    case TrainingState::kRequested:
      return "requested";
    case TrainingState::kComplied:
      return "complied";
    case TrainingState::kFallback:
      return "fallback";
  }
  return "none";
}

std::optional<double> TrainingTargetFor(polca::PolicyLevel level, const polca::PolicySpec& policy) {
  switch (level) {
    case polca::PolicyLevel::kNormal:
      return std::nullopt;
    case polca::PolicyLevel::kT1:
      return policy.t1_training_w;
    case polca::PolicyLevel::kT2Low:
    case polca::PolicyLevel::kT2High:
      return policy.t2_training_w;
  }
  return std::nullopt;
}

std::string TrainingTargetReason(const RowPolicyState& state, double fraction) {
  return std::string(kTargetReasonPrefix) + CeilingReason(state) + "; row at " + FixedDecimals(100 * fraction, 1) +
         " % of its budget";
}

std::optional<RowPolicyState> ParseTrainingTargetReason(const std::string& reason) {
  const std::string prefix = kTargetReasonPrefix;
  if (reason.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t end = reason.find(';', prefix.size());
  return ParseCeilingReason(reason.substr(prefix.size(), end == std::string::npos ? end : end - prefix.size()));
}

TrainingTargets::TrainingTargets(std::vector<std::string> job_ids, polca::PolicySpec policy, double response_s,
                                 double lease_s, double max_answer_age_s, bool shadow, TrainingCalls calls)
    : policy_(policy),
      response_s_(response_s),
      lease_s_(std::max(1.0, lease_s)),
      max_answer_age_s_(max_answer_age_s),
      shadow_(shadow),
      calls_(std::move(calls)) {
  for (std::string& id : job_ids) {
    if (std::find(job_ids_.begin(), job_ids_.end(), id) == job_ids_.end()) job_ids_.push_back(std::move(id));
  }
  for (const std::string& id : job_ids_) views_[id];
}

void TrainingTargets::Learn(JobView& view, const JobPowerTarget& answer, double now_s) {
  view.known = true;
  view.server_target_w = answer.target_w;
  view.server_reason = answer.reason;
  // A job that ran its capped plan and then changed deployment (a new plan, a straggler) has the
  // response time again; before it complied, a new version does not extend its time.
  if (answer.deployment_version != view.version && view.complied) view.clock_from_s = now_s;
  view.version = answer.deployment_version;
}

std::vector<ObservedCeiling> TrainingTargets::Resume() {
  std::vector<ObservedCeiling> observed;
  if (shadow_ || !calls_.get) return observed;
  for (const std::string& id : job_ids_) {
    Result<JobPowerTarget> answer = calls_.get(id);
    if (!answer.ok()) {
      ++call_errors_;
      resume_errors_.push_back(answer.error().message);
      continue;
    }
    Learn(views_[id], *answer, 0);
    if (std::optional<RowPolicyState> state = ParseTrainingTargetReason(answer->reason)) {
      observed.push_back({CeilingReason(*state), 0});
    }
  }
  return observed;
}

TrainingJobReport TrainingTargets::RunJob(const std::string& job_id, JobView& view, const RowPolicyState& state,
                                          double fraction, double now_s) {
  TrainingJobReport report{job_id, TrainingTargetFor(state.level, policy_), TrainingState::kNone, ""};
  const std::optional<double> wanted = report.target_w;
  if (wanted != view.wanted_w) {
    view.wanted_w = wanted;
    view.clock_from_s = now_s;
    view.complied = false;
    view.complied_at_s = -1;
  }
  view.falls_back = false;
  if (shadow_) {
    if (wanted) {
      report.state = TrainingState::kRequested;
      report.detail = "shadow mode: not sent";
    }
    return report;
  }
  const std::string target_text = wanted ? GeneralText(*wanted) + " W per GPU" : "";

  if (!wanted) {
    view.complied = false;
    if (!view.known) {
      Result<JobPowerTarget> answer = calls_.get(job_id);
      if (!answer.ok()) {
        ++call_errors_;
        report.detail = answer.error().message + " (read again next period)";
        return report;
      }
      Learn(view, *answer, now_s);
    }
    if (view.server_target_w && ParseTrainingTargetReason(view.server_reason)) {
      Result<JobPowerTarget> answer = calls_.clear(job_id);
      if (!answer.ok()) {
        ++call_errors_;
        report.detail = "the target it set is not cleared: " + answer.error().message + " (retried next period)";
        return report;
      }
      Learn(view, *answer, now_s);
      report.detail = "target cleared";
    }
    return report;
  }

  // Sent again when the server may not hold it, holds it for another state of the row, or its
  // lease needs renewing.
  const bool on_server = view.known && view.server_target_w == wanted &&
                         ParseTrainingTargetReason(view.server_reason) == std::optional<RowPolicyState>(state) &&
                         now_s - view.sent_at_s < lease_s_ / 3;
  Result<JobPowerTarget> answer =
      on_server ? calls_.get(job_id) : calls_.set(job_id, *wanted, TrainingTargetReason(state, fraction), lease_s_);
  if (!answer.ok()) {
    ++call_errors_;
    view.known = false;
    if (view.complied_at_s >= 0 && now_s - view.complied_at_s <= max_answer_age_s_) {
      // It ran the plan a moment ago, and its ranks keep their deployment while the server is away.
      report.state = TrainingState::kComplied;
      report.detail = answer.error().message + " (it complied " + FixedDecimals(now_s - view.complied_at_s, 1) +
                      " s ago: ceilings after " + GeneralText(max_answer_age_s_) + " s without an answer)";
      return report;
    }
    view.complied = false;
    view.falls_back = true;
    report.state = TrainingState::kFallback;
    report.detail = answer.error().message + " (ceilings until the planning server answers)";
    return report;
  }
  Learn(view, *answer, now_s);
  if (!on_server) view.sent_at_s = now_s;
  const std::string version = "deployment version " + std::to_string(answer->deployment_version);
  if (answer->complied()) {
    view.complied = true;
    view.complied_at_s = now_s;
    report.state = TrainingState::kComplied;
    report.detail = "every rank runs a plan of " + GeneralText(answer->point_power_per_gpu_w.value_or(0)) +
                    " W per GPU (" + version + ")";
    return report;
  }
  view.complied = false;
  if (answer->applied && !answer->met) {
    view.falls_back = true;
    report.state = TrainingState::kFallback;
    report.detail = "no plan of the job is at or below " + target_text + "; its lowest is " +
                    GeneralText(answer->point_power_per_gpu_w.value_or(0)) + " W per GPU";
    return report;
  }
  const double waited_s = now_s - view.clock_from_s;
  const std::string why = answer->applied ? "not every rank is past the apply step of " + version
                                          : "the target is not applied: " + answer->note;
  if (waited_s >= response_s_) {
    view.falls_back = true;
    report.state = TrainingState::kFallback;
    report.detail = why + " after " + GeneralText(response_s_) + " s";
    return report;
  }
  report.state = TrainingState::kRequested;
  report.detail = why + " (" + FixedDecimals(waited_s, 1) + " s of " + GeneralText(response_s_) + " s)";
  return report;
}

std::vector<TrainingJobReport> TrainingTargets::Run(const RowPolicyState& state, double fraction, double now_s) {
  last_.clear();
  for (const std::string& id : job_ids_) last_.push_back(RunJob(id, views_[id], state, fraction, now_s));
  return last_;
}

bool TrainingTargets::falls_back(const std::string& job_id) const {
  auto it = views_.find(job_id);
  return it != views_.end() && it->second.falls_back;
}

}  // namespace wattcut::row_control
