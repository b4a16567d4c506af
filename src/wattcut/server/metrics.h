// Server metrics in the Prometheus text exposition format (version 0.0.4), written by
// hand: a handful of counters, gauges and histograms need no client library.
//
//   wattcut_jobs, wattcut_ranks, wattcut_long_polls_waiting          gauges
//   wattcut_stragglers                                                gauge
//   wattcut_jobs_by_frontier_state{state}                             gauge
//   wattcut_http_requests_total{endpoint,method,status}               counter
//   wattcut_http_request_duration_seconds{endpoint}                   histogram
//   wattcut_frontier_computations_total{outcome}                      counter
//   wattcut_frontier_computation_seconds                              histogram
//   wattcut_http_connections_cut_total{reason}                        counter
//   wattcut_plan_switches_total                                       counter
//   wattcut_straggler_reports_total{kind}                             counter
//   wattcut_power_target_per_gpu_watts{job_id,kind}                      gauge
//   wattcut_power_target_point_per_gpu_watts{job_id,kind}                gauge
//   wattcut_power_target_met{job_id}                                     gauge
//   wattcut_job_measured_gpu_energy_joules{job_id}                       gauge
//
// Every label value comes from a fixed set, whatever clients send: endpoints are route
// names (or "unmatched", "unauthorized"), methods outside the standard ones are "other",
// statuses are the server's own, so no request can add a series beyond that set. The one
// exception is the power target's `job_id` label (not `job`, which Prometheus gives every
// series of a scrape target): a job id the server assigned (never text a
// request chooses freely), and only for the jobs that have a power target now (a row
// controller sets one per training job it manages), so these series are as many as those
// jobs and go when the target is cleared or the job deleted; and the measured GPU energy's,
// only for the jobs some node reported for (PUT /v1/jobs/{id}/measured-energy/{node}), whose
// series go when the job is deleted.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "wattcut/base/mutex.h"
#include "wattcut/server/frontier_state.h"

namespace wattcut::server {

class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,    0.25,  0.5,    1,     2.5,  10,    60};
  void Observe(double value);
  // Appends NAME_bucket/_sum/_count lines; `labels` is "" or `a="b",` (trailing comma).
  void Write(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::array<uint64_t, kBounds.size() + 1> counts_{};
  double sum_ = 0;
  uint64_t count_ = 0;
};

// The method label of a request: the standard methods as they are, anything else "other".
const char* MethodLabel(const std::string& method);

// Jobs by where their frontier is (indexed by FrontierState), and the stored jobs the server
// could not load (quarantined): counted when /metrics is asked.
struct JobStateCounts {
  std::array<int64_t, 4> by_frontier_state{};
  int64_t quarantined = 0;
};

// One job's power target as /metrics shows it (JobRegistry::PowerTargetGauges).
struct PowerTargetGauge {
  std::string job_id;
  const char* kind = "peak_1s";  // PowerTarget::KindName
  double target_per_gpu_w = 0;
  // The frontier is ready and the target decided a point; until then met is 0 and there is
  // no point power.
  bool applied = false;
  bool met = false;
  double point_per_gpu_w = 0;  // the deployed cap point's power (the lowest when not met)
};

// The GPU energy a job's nodes measured, summed (JobRegistry::MeasuredGpuEnergyGauges).
struct MeasuredGpuEnergyGauge {
  std::string job_id;
  double total_j = 0;
};

class Metrics {
 public:
  void RecordRequest(const std::string& endpoint, const std::string& method, int status, double seconds);
  void RecordFrontier(bool ok, double seconds);
  // `reason` is "client_limit" or "request_timeout".
  void RecordConnectionCut(const char* reason);
  // A job's deployment got a new version: what its ranks run changed.
  void RecordPlanSwitch() { ++plan_switches_; }
  // A straggler report (`recovered`: a recovery) that the server stored.
  void RecordStragglerReport(bool recovered) { ++(recovered ? recoveries_ : straggler_reports_); }
  // Pipelines reported as stragglers and not recovered, over all jobs.
  void SetStragglers(int64_t stragglers) { stragglers_ = stragglers; }
  void SetJobStates(const JobStateCounts& counts) {
    MutexLock lock(mu_);
    job_states_ = counts;
  }
  void SetGauges(int64_t jobs, int64_t ranks) {
    jobs_ = jobs;
    ranks_ = ranks;
  }
  void SetPowerTargets(std::vector<PowerTargetGauge> targets) {
    MutexLock lock(mu_);
    power_targets_ = std::move(targets);
  }
  void SetMeasuredGpuEnergies(std::vector<MeasuredGpuEnergyGauge> energies) {
    MutexLock lock(mu_);
    measured_gpu_energies_ = std::move(energies);
  }
  std::atomic<int64_t>& long_polls_waiting() { return long_polls_waiting_; }

  std::string Render() const;

 private:
  // Render's parts, one metric family or a few of one concept each, in the order Render writes them.
  void RenderCounters(std::string& out) const;
  void RenderJobStates(std::string& out) const REQUIRES(mu_);
  void RenderHttp(std::string& out) const REQUIRES(mu_);
  void RenderFrontierComputations(std::string& out) const REQUIRES(mu_);
  void RenderPowerTargets(std::string& out) const REQUIRES(mu_);
  void RenderMeasuredGpuEnergy(std::string& out) const REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ GUARDED_BY(mu_);
  std::map<std::string, Histogram> latency_ GUARDED_BY(mu_);
  uint64_t cut_client_limit_ GUARDED_BY(mu_) = 0;
  uint64_t cut_request_timeout_ GUARDED_BY(mu_) = 0;
  uint64_t frontier_ok_ GUARDED_BY(mu_) = 0;
  uint64_t frontier_error_ GUARDED_BY(mu_) = 0;
  Histogram frontier_seconds_ GUARDED_BY(mu_);
  JobStateCounts job_states_ GUARDED_BY(mu_);
  std::vector<PowerTargetGauge> power_targets_ GUARDED_BY(mu_);
  std::vector<MeasuredGpuEnergyGauge> measured_gpu_energies_ GUARDED_BY(mu_);
  std::atomic<int64_t> jobs_{0};
  std::atomic<int64_t> ranks_{0};
  std::atomic<int64_t> long_polls_waiting_{0};
  std::atomic<int64_t> stragglers_{0};
  std::atomic<uint64_t> plan_switches_{0};
  std::atomic<uint64_t> straggler_reports_{0};
  std::atomic<uint64_t> recoveries_{0};
};

}  // namespace wattcut::server
