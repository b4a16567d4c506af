#include "wattcut/server/metrics.h"

#include "wattcut/base/prometheus_text.h"

namespace wattcut::server {

const char* MethodLabel(const std::string& method) {
  for (const char* known : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}) {
    if (method == known) return known;
  }
  return "other";
}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < kBounds.size() && value > kBounds[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::Write(std::string& out, const std::string& name, const std::string& labels) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= kBounds.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < kBounds.size() ? PrometheusValue(kBounds[i]) : "+Inf";
    out += name + "_bucket{" + labels + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  std::string plain = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  out += name + "_sum" + plain + " " + PrometheusValue(sum_) + "\n";
  out += name + "_count" + plain + " " + std::to_string(count_) + "\n";
}

void Metrics::RecordRequest(const std::string& endpoint, const std::string& method, int status, double seconds) {
  MutexLock lock(mu_);
  ++requests_[{endpoint, MethodLabel(method), status}];
  latency_[endpoint].Observe(seconds);
}

void Metrics::RecordConnectionCut(const char* reason) {
  MutexLock lock(mu_);
  ++(std::string(reason) == "client_limit" ? cut_client_limit_ : cut_request_timeout_);
}

void Metrics::RecordFrontier(bool ok, double seconds) {
  MutexLock lock(mu_);
  ++(ok ? frontier_ok_ : frontier_error_);
  if (ok) frontier_seconds_.Observe(seconds);
}

std::string Metrics::Render() const {
  std::string out;
  RenderCounters(out);
  MutexLock lock(mu_);
  RenderJobStates(out);
  RenderHttp(out);
  RenderFrontierComputations(out);
  RenderPowerTargets(out);
  RenderMeasuredGpuEnergy(out);
  return out;
}

// Jobs, ranks, long polls, stragglers and plan switches: counted without the lock.
void Metrics::RenderCounters(std::string& out) const {
  out += "# HELP wattcut_jobs Jobs registered.\n# TYPE wattcut_jobs gauge\n";
  out += "wattcut_jobs " + std::to_string(jobs_.load()) + "\n";
  out += "# HELP wattcut_ranks Ranks registered, over all jobs.\n# TYPE wattcut_ranks gauge\n";
  out += "wattcut_ranks " + std::to_string(ranks_.load()) + "\n";
  out +=
      "# HELP wattcut_long_polls_waiting Schedule long polls waiting for their barrier.\n"
      "# TYPE wattcut_long_polls_waiting gauge\n";
  out += "wattcut_long_polls_waiting " + std::to_string(long_polls_waiting_.load()) + "\n";
  out +=
      "# HELP wattcut_stragglers Pipelines reported as stragglers and not recovered, over all jobs.\n"
      "# TYPE wattcut_stragglers gauge\n";
  out += "wattcut_stragglers " + std::to_string(stragglers_.load()) + "\n";
  out +=
      "# HELP wattcut_plan_switches_total New deployment versions: what a job's ranks run changed (a plan "
      "selection, a frontier, a power target, a straggler report or recovery).\n# TYPE wattcut_plan_switches_total "
      "counter\n";
  out += "wattcut_plan_switches_total " + std::to_string(plan_switches_.load()) + "\n";
  out +=
      "# HELP wattcut_straggler_reports_total Straggler reports stored, by kind: a straggler (slowdown or "
      "iteration time) or its recovery.\n# TYPE wattcut_straggler_reports_total counter\n";
  out += "wattcut_straggler_reports_total{kind=\"straggler\"} " + std::to_string(straggler_reports_.load()) + "\n";
  out += "wattcut_straggler_reports_total{kind=\"recovered\"} " + std::to_string(recoveries_.load()) + "\n";
}

void Metrics::RenderJobStates(std::string& out) const {
  out +=
      "# HELP wattcut_jobs_by_frontier_state Jobs by where their frontier is: none (no profile yet), computing, "
      "ready, failed; quarantined: stored jobs the server could not load.\n"
      "# TYPE wattcut_jobs_by_frontier_state gauge\n";
  for (FrontierState state :
       {FrontierState::kNone, FrontierState::kComputing, FrontierState::kReady, FrontierState::kFailed}) {
    out += std::string("wattcut_jobs_by_frontier_state{state=\"") + FrontierStateName(state) + "\"} " +
           std::to_string(job_states_.by_frontier_state[static_cast<size_t>(state)]) + "\n";
  }
  out += "wattcut_jobs_by_frontier_state{state=\"quarantined\"} " + std::to_string(job_states_.quarantined) + "\n";
}

// Requests by endpoint, their durations, and the connections the server cut.
void Metrics::RenderHttp(std::string& out) const {
  out +=
      "# HELP wattcut_http_requests_total HTTP requests by endpoint, method and status.\n"
      "# TYPE wattcut_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [endpoint, method, status] = key;
    out += "wattcut_http_requests_total{endpoint=\"" + PrometheusLabelValue(endpoint) + "\",method=\"" +
           PrometheusLabelValue(method) + "\",status=\"" + std::to_string(status) + "\"} " + std::to_string(count) +
           "\n";
  }
  out +=
      "# HELP wattcut_http_request_duration_seconds Time to answer a request, long polls "
      "included.\n# TYPE wattcut_http_request_duration_seconds histogram\n";
  for (const auto& [endpoint, histogram] : latency_) {
    histogram.Write(out, "wattcut_http_request_duration_seconds",
                    "endpoint=\"" + PrometheusLabelValue(endpoint) + "\",");
  }
  out +=
      "# HELP wattcut_http_connections_cut_total Connections the server closed on its own: over "
      "--max-connections-per-client, or a request not received within --request-timeout.\n"
      "# TYPE wattcut_http_connections_cut_total counter\n";
  out += "wattcut_http_connections_cut_total{reason=\"client_limit\"} " + std::to_string(cut_client_limit_) + "\n";
  out +=
      "wattcut_http_connections_cut_total{reason=\"request_timeout\"} " + std::to_string(cut_request_timeout_) + "\n";
}

void Metrics::RenderFrontierComputations(std::string& out) const {
  out +=
      "# HELP wattcut_frontier_computations_total Frontier computations by outcome.\n"
      "# TYPE wattcut_frontier_computations_total counter\n";
  out += "wattcut_frontier_computations_total{outcome=\"ok\"} " + std::to_string(frontier_ok_) + "\n";
  out += "wattcut_frontier_computations_total{outcome=\"error\"} " + std::to_string(frontier_error_) + "\n";
  out +=
      "# HELP wattcut_frontier_computation_seconds Time to compute one frontier.\n"
      "# TYPE wattcut_frontier_computation_seconds histogram\n";
  frontier_seconds_.Write(out, "wattcut_frontier_computation_seconds", "");
}

// Each job's target, the point it gives, and whether it is met.
void Metrics::RenderPowerTargets(std::string& out) const {
  out +=
      "# HELP wattcut_power_target_per_gpu_watts A job's power target per GPU (PUT /v1/jobs/{id}/power_target), "
      "by kind: peak_1s (the largest 1-s average) or average.\n"
      "# TYPE wattcut_power_target_per_gpu_watts gauge\n";
  for (const PowerTargetGauge& t : power_targets_) {
    out += "wattcut_power_target_per_gpu_watts{job_id=\"" + PrometheusLabelValue(t.job_id) + "\",kind=\"" + t.kind +
           "\"} " + PrometheusValue(t.target_per_gpu_w) + "\n";
  }
  out +=
      "# HELP wattcut_power_target_point_per_gpu_watts The power per GPU, of the target's kind, of the plan the "
      "target gives: at or below the target when met, the lowest the job can draw when not.\n"
      "# TYPE wattcut_power_target_point_per_gpu_watts gauge\n";
  for (const PowerTargetGauge& t : power_targets_) {
    if (!t.applied) continue;
    out += "wattcut_power_target_point_per_gpu_watts{job_id=\"" + PrometheusLabelValue(t.job_id) + "\",kind=\"" +
           t.kind + "\"} " + PrometheusValue(t.point_per_gpu_w) + "\n";
  }
  out +=
      "# HELP wattcut_power_target_met 1 when every pipeline of the job runs a plan at or below its power target; "
      "0 when no plan is that low (the lowest-power plan runs) or the frontier is not ready yet.\n"
      "# TYPE wattcut_power_target_met gauge\n";
  for (const PowerTargetGauge& t : power_targets_) {
    out += "wattcut_power_target_met{job_id=\"" + PrometheusLabelValue(t.job_id) + "\"} " + (t.met ? "1" : "0") + "\n";
  }
}

void Metrics::RenderMeasuredGpuEnergy(std::string& out) const {
  out +=
      "# HELP wattcut_job_measured_gpu_energy_joules The GPU energy a job used as its nodes measured it (PUT "
      "/v1/jobs/{id}/measured-energy/{node}, from the GPUs' energy counters), summed over the nodes that "
      "reported; the whole job, start-up and profiling included.\n"
      "# TYPE wattcut_job_measured_gpu_energy_joules gauge\n";
  for (const MeasuredGpuEnergyGauge& e : measured_gpu_energies_) {
    out += "wattcut_job_measured_gpu_energy_joules{job_id=\"" + PrometheusLabelValue(e.job_id) + "\"} " +
           PrometheusValue(e.total_j) + "\n";
  }
}

}  // namespace wattcut::server
