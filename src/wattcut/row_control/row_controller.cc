#include "wattcut/row_control/row_controller.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "wattcut/base/general_text.h"
#include "wattcut/base/prometheus_text.h"
#include "wattcut/polca/row_ceiling.h"

namespace wattcut::row_control {

using polca::ControlCommand;

namespace {

polca::ControlSpec ControlFor(const RowControllerOptions& options) {
  polca::ControlSpec control = options.config.control;
  if (options.in_band) {
    control.actuation_latency_s = 0;
    control.brake_latency_s = 0;
  }
  return control;
}

double CeilingLeaseS(const RowControllerOptions& options) {
  return options.ceiling_lease_s > 0 ? options.ceiling_lease_s
                                     : std::max(30.0, 10 * options.config.control.telemetry_period_s);
}

}  // namespace

RowController::RowController(RowControllerOptions options, std::vector<ControlledServer> servers, RowCalls calls)
    : options_(std::move(options)),
      servers_(std::move(servers)),
      calls_(std::move(calls)),
      policy_(options_.policy, options_.config.policy, ControlFor(options_)),
      actuation_(options_.config.gpu.max_freq_mhz, options_.config.policy.brake_mhz),
      training_(TrainingJobs(servers_), options_.config.policy, options_.config.control.training_response_s,
                CeilingLeaseS(options_), options_.config.control.max_reading_age_s, options_.shadow, calls_.training),
      budget_w_(options_.config.row_budget_w()),
      lease_s_(CeilingLeaseS(options_)),
      start_(ControllerStart{options_.policy, options_.in_band, {}, 0, ServersByClass(servers_)}),
      views_(servers_.size()) {
  policy_.SetLevelCeilings(polca::RowCeilings(options_.config, policy_, start_->servers));
}

polca::RowServers RowController::ServersByClass(const std::vector<ControlledServer>& servers) {
  polca::RowServers by_class;
  for (const ControlledServer& server : servers) {
    if (!server.training_job_id.empty()) {
      ++by_class.training;
    } else if (server.priority == polca::Priority::kLow) {
      ++by_class.low_priority;
    } else {
      ++by_class.high_priority;
    }
  }
  return by_class;
}

std::vector<std::string> RowController::TrainingJobs(const std::vector<ControlledServer>& servers) {
  std::vector<std::string> jobs;
  for (const ControlledServer& server : servers) {
    if (!server.training_job_id.empty()) jobs.push_back(server.training_job_id);
  }
  return jobs;
}

RowPolicyState RowController::Resume(double now_s) {
  std::vector<ObservedCeiling> all = training_.Resume();
  if (calls_.read_ceilings) {
    auto observed = calls_.read_ceilings();
    for (size_t i = 0; i < observed.size() && i < views_.size(); ++i) {
      if (!observed[i].ok()) continue;
      all.insert(all.end(), observed[i]->begin(), observed[i]->end());
    }
  }
  const RowPolicyState state = ResumeState(all);
  policy_.Resume(state.level, state.brake, now_s);
  if (start_) {
    start_->resumed = {policy_.level(), policy_.brake_requested()};
    start_->resumed_at_s = now_s;
  }
  // What the agents hold is what the resumed state asks for: the settings count as in effect.
  ControlCommand low{ControlCommand::Target::kLowPriority, now_s, now_s, policy_.requested(polca::Priority::kLow),
                     false};
  ControlCommand high{ControlCommand::Target::kHighPriority, now_s, now_s, policy_.requested(polca::Priority::kHigh),
                      false};
  actuation_.Submit(low);
  actuation_.Submit(high);
  actuation_.Submit({ControlCommand::Target::kBrake, now_s, now_s, {}, state.brake});
  actuation_.ApplyUntil(now_s);
  return state;
}

std::string RowController::BadReading(const Result<double>& reading, double max_w) {
  if (!reading.ok()) return reading.error().message;
  const double w = *reading;
  if (std::isfinite(w) && w >= 0 && w <= max_w) return "";
  return "power_w " + GeneralText(w) + " W is not a physical reading (outside [0, " + GeneralText(max_w) + " W], " +
         GeneralText(kMaxReadingOverProvisioned) + " x row.provisioned_w_per_server)";
}

std::optional<int> RowController::DesiredCeiling(const ControlledServer& server) const {
  if (!server.training_job_id.empty() && !training_.falls_back(server.training_job_id)) {
    // Its job runs a plan under the row's target (or none is wanted): no lock, but the brake.
    if (!actuation_.brake_active()) return std::nullopt;
    return static_cast<int>(std::lround(options_.config.policy.brake_mhz));
  }
  const polca::GpuLimits limits = actuation_.Limits(server.priority);
  if (limits.freq_mhz >= options_.config.gpu.max_freq_mhz) return std::nullopt;
  return static_cast<int>(std::lround(limits.freq_mhz));
}

Decision RowController::RunPeriod(double now_s, double unix_time_s) {
  Decision report;
  report.now_s = now_s;
  report.unix_time_s = unix_time_s;
  report.shadow = options_.shadow;
  const double max_age_s = options_.config.control.max_reading_age_s;

  // 1. Read.
  std::vector<Result<double>> readings = calls_.read_power_w ? calls_.read_power_w() : std::vector<Result<double>>{};
  double oldest_s = now_s;
  double total_w = 0;
  const double max_w = kMaxReadingOverProvisioned * options_.config.row.provisioned_w_per_server;
  for (size_t i = 0; i < servers_.size(); ++i) {
    ServerView& view = views_[i];
    const std::string why = i < readings.size() ? BadReading(readings[i], max_w) : "no reading";
    if (why.empty()) {
      view.seen = true;
      view.last_w = *readings[i];
      view.last_at_s = now_s;
      view.peak_w = std::max(view.peak_w, view.last_w);
      total_w += view.last_w;
      continue;
    }
    report.stale_servers.push_back(servers_[i].name);
    report.stale_reasons[servers_[i].name] = why;
    ++stale_readings_;
    if (!view.seen) {
      // Never read: as if at its provisioned power, and as old as can be.
      total_w += options_.config.row.provisioned_w_per_server;
      oldest_s = std::min(oldest_s, now_s - max_age_s - 1);
      continue;
    }
    total_w += now_s - view.last_at_s <= max_age_s ? view.last_w : view.peak_w;
    oldest_s = std::min(oldest_s, view.last_at_s);
  }
  report.row_power_w = total_w;
  report.fraction = budget_w_ > 0 ? total_w / budget_w_ : 0;
  report.measured_at_s = oldest_s;

  // 2. Decide.
  const std::string state_before = polca::LevelName(policy_.level()) + (policy_.brake_requested() ? "+brake" : "");
  report.commands = policy_.Decide({oldest_s, report.fraction, report.stale_servers.empty()}, now_s);
  for (const ControlCommand& c : report.commands) actuation_.Submit(c);
  actuation_.ApplyUntil(now_s);
  if (!training_.job_ids().empty()) {
    report.training = training_.Run({policy_.level(), policy_.brake_requested()}, report.fraction, now_s);
  }

  // 3. Actuate: one ceiling per server, sent when it changed or its lease needs renewing.
  const std::string reason = CeilingReason({policy_.level(), policy_.brake_requested()});
  std::vector<CeilingCommand> to_send;
  for (size_t i = 0; i < servers_.size(); ++i) {
    const ServerView& view = views_[i];
    const std::optional<int> wanted = DesiredCeiling(servers_[i]);
    const bool changed = !view.sent_known || view.sent_mhz != wanted;
    const bool renew = wanted.has_value() && now_s - view.sent_at_s >= lease_s_ / 3;
    if (changed || renew) to_send.push_back({i, wanted, lease_s_, reason});
  }
  report.sent = to_send;
  if (options_.shadow) {
    // Nothing is sent; the view follows what would have been, so each change is logged once.
    for (const CeilingCommand& c : to_send) {
      views_[c.server].sent_known = true;
      views_[c.server].sent_mhz = c.mhz;
      views_[c.server].sent_at_s = now_s;
    }
  } else if (!to_send.empty() && calls_.send) {
    const std::vector<Status> results = calls_.send(to_send);
    for (size_t k = 0; k < to_send.size(); ++k) {
      ServerView& view = views_[to_send[k].server];
      const bool ok = k < results.size() && results[k].ok();
      if (ok) {
        view.sent_known = true;
        view.sent_mhz = to_send[k].mhz;
        view.sent_at_s = now_s;
        ++ceilings_sent_;
      } else {
        view.sent_known = false;  // retried next period
        ++command_errors_;
        report.send_errors.push_back(servers_[to_send[k].server].name + ": " +
                                     (k < results.size() ? results[k].error().message : "not sent"));
      }
    }
  }

  // Metrics: the time since the last period counts for the state it was in.
  if (last_now_s_ >= 0 && now_s > last_now_s_) seconds_in_state_[state_before] += now_s - last_now_s_;
  last_now_s_ = now_s;
  ++periods_;

  // 4. Log.
  report.level = policy_.level();
  report.brake = policy_.brake_requested();
  report.started = std::exchange(start_, std::nullopt);
  if (options_.log) {
    std::vector<std::string> names;
    for (const ControlledServer& server : servers_) names.push_back(server.name);
    options_.log(DecisionLogLine(report, names));
  }
  last_ = report;
  return report;
}

std::string RowController::RenderMetrics() const {
  std::string out;
  auto gauge = [&out](const std::string& name, const std::string& help, const std::string& labels, double value) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + labels + " " +
           PrometheusValue(value) + "\n";
  };
  auto counter = [&out](const std::string& name, const std::string& help, double value) {
    out +=
        "# HELP " + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " + PrometheusValue(value) + "\n";
  };
  gauge("wattcut_row_power_watts", "The row's power in the last period (W).", "", last_.row_power_w);
  gauge("wattcut_row_budget_watts", "The row's power budget (W).", "", budget_w_);
  gauge("wattcut_row_power_fraction", "The row's power as a fraction of its budget.", "", last_.fraction);
  out +=
      "# HELP wattcut_row_threshold_fraction The policy's thresholds (policy.* of the config) as fractions of the "
      "budget.\n# TYPE wattcut_row_threshold_fraction gauge\n";
  const polca::PolicySpec& policy = options_.config.policy;
  // The thresholds the policy acts on: the headroom policy's guard and release instead of T1, T2.
  const bool headroom = options_.policy == polca::PolicyKind::kHeadroom;
  const std::vector<std::pair<const char*, double>> thresholds =
      headroom ? std::vector<std::pair<const char*, double>>{{"headroom_guard", policy.headroom_guard},
                                                             {"headroom_release", policy.headroom_release},
                                                             {"brake", policy.brake},
                                                             {"brake_release", policy.brake_release}}
               : std::vector<std::pair<const char*, double>>{
                     {"t1", policy.t1},       {"t1_release", policy.t1_release},
                     {"t2", policy.t2},       {"t2_release", policy.t2_release},
                     {"brake", policy.brake}, {"brake_release", policy.brake_release}};
  for (const auto& [name, fraction] : thresholds) {
    out +=
        std::string("wattcut_row_threshold_fraction{threshold=\"") + name + "\"} " + PrometheusValue(fraction) + "\n";
  }
  out += "# HELP wattcut_row_state The policy's level (1 for the current one).\n# TYPE wattcut_row_state gauge\n";
  for (polca::PolicyLevel level : {polca::PolicyLevel::kNormal, polca::PolicyLevel::kT1, polca::PolicyLevel::kT2Low,
                                   polca::PolicyLevel::kT2High}) {
    out +=
        "wattcut_row_state{state=\"" + polca::LevelName(level) + "\"} " + (policy_.level() == level ? "1" : "0") + "\n";
  }
  gauge("wattcut_row_brake", "1 while the brake is requested.", "", policy_.brake_requested() ? 1 : 0);
  if (options_.policy == polca::PolicyKind::kHeadroom) {
    gauge("wattcut_row_forecast_correction_fraction",
          "What the headroom policy added to its forecast from its own record of the last hour (0, or below 0 where "
          "the forecast over-predicted the row), as a fraction of the budget.",
          "", policy_.forecast_correction());
    gauge("wattcut_row_young_forecast_trend_fraction",
          "The share of its trend the headroom policy's forecast carried from a window just after a level landed "
          "(1: all of it; less where this row's own record found such trends over-predicting it).",
          "", policy_.young_trend_share());
  }
  out +=
      "# HELP wattcut_row_state_seconds_total Time spent in each state (+brake while braked).\n"
      "# TYPE wattcut_row_state_seconds_total counter\n";
  for (const auto& [state, seconds] : seconds_in_state_) {
    out += "wattcut_row_state_seconds_total{state=\"" + state + "\"} " + PrometheusValue(seconds) + "\n";
  }
  out +=
      "# HELP wattcut_row_ceiling_mhz The SM clock ceiling in effect per priority class (0: none).\n"
      "# TYPE wattcut_row_ceiling_mhz gauge\n";
  for (polca::Priority priority : {polca::Priority::kHigh, polca::Priority::kLow}) {
    const polca::GpuLimits limits = actuation_.Limits(priority);
    const double mhz = limits.freq_mhz >= options_.config.gpu.max_freq_mhz ? 0 : limits.freq_mhz;
    out += std::string("wattcut_row_ceiling_mhz{class=\"") + (priority == polca::Priority::kHigh ? "high" : "low") +
           "\"} " + PrometheusValue(mhz) + "\n";
  }
  counter("wattcut_row_brake_engagements_total", "Times the brake was engaged.", policy_.brake_engagements());
  counter("wattcut_row_stale_readings_total", "Server readings that did not arrive in their period.",
          static_cast<double>(stale_readings_));
  counter("wattcut_row_command_errors_total", "Ceiling commands that failed (retried the next period).",
          static_cast<double>(command_errors_));
  counter("wattcut_row_ceilings_sent_total", "Ceiling commands that agents acknowledged.",
          static_cast<double>(ceilings_sent_));
  counter("wattcut_row_periods_total", "Telemetry periods run.", static_cast<double>(periods_));
  if (!training_.job_ids().empty()) {
    out +=
        "# HELP wattcut_row_training_target_watts The peak 1-s power per GPU the row asks of each training job "
        "(0: none).\n# TYPE wattcut_row_training_target_watts gauge\n";
    for (const TrainingJobReport& t : training_.last()) {
      out += "wattcut_row_training_target_watts{job_id=\"" + PrometheusLabelValue(t.job_id) + "\"} " +
             PrometheusValue(t.target_w.value_or(0)) + "\n";
    }
    out +=
        "# HELP wattcut_row_training_fallback 1 while a training job's servers get ceilings (it did not comply, or "
        "its planning server cannot be reached).\n# TYPE wattcut_row_training_fallback gauge\n";
    for (const TrainingJobReport& t : training_.last()) {
      out += "wattcut_row_training_fallback{job_id=\"" + PrometheusLabelValue(t.job_id) + "\"} " +
             (t.state == TrainingState::kFallback ? "1" : "0") + "\n";
    }
    counter("wattcut_row_planning_errors_total", "Planning-server calls that failed (asked again the next period).",
            static_cast<double>(training_.call_errors()));
  }
  return out;
}

}  // namespace wattcut::row_control
