#include "wattcut/polca/row_sweep.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {

int ServersFor(int baseline, double added_fraction) {
  return static_cast<int>(std::lround(baseline * (1 + added_fraction)));
}

namespace {

// One run of the sweep, on the sweep's arrivals (the same for every run of a row size and seed).
using RunOne = std::function<Result<RowRunResult>(const RowRunOptions&)>;

Result<SweepResult> Sweep(const PolcaConfig& config, const RunOne& simulate, const SweepOptions& given,
                          const std::function<void(const std::string&)>& progress) {
  SweepOptions options = given;
  std::sort(options.added_fractions.begin(), options.added_fractions.end());
  options.added_fractions.erase(std::unique(options.added_fractions.begin(), options.added_fractions.end()),
                                options.added_fractions.end());
  if (options.added_fractions.empty()) return Error{"the sweep needs at least one added-servers value"};
  if (options.policies.empty()) return Error{"the sweep needs at least one policy"};
  for (double a : options.added_fractions) {
    if (!(a >= 0) || a > kMaxAddedFraction) return Error{"added servers must be between 0 % and 1000 %"};
  }
  if (options.training_controls.empty()) options.training_controls = {TrainingControl::kLocks};
  const size_t n_added = options.added_fractions.size();
  // A "policy" below is a (policy, training control) pair, policy-major.
  const size_t n_controls = options.training_controls.size();
  const size_t n_policies = options.policies.size() * n_controls;
  if (Status s = CheckSweepSize(n_added, n_policies, options.jobs); !s.ok()) return s.error();
  for (double a : {options.added_fractions.front(), options.added_fractions.back()}) {
    if (Status s = CheckRowSize(ServersFor(config.row.baseline_servers, a), "the row"); !s.ok()) return s.error();
  }
  // Job k < n_added: reference runs; then one per (added, policy).
  const size_t n_jobs = n_added * (1 + n_policies);
  std::vector<Result<RowRunResult>> results(n_jobs, Error{"not run"});
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;

  auto worker = [&]() {
    while (true) {
      size_t k = next.fetch_add(1);
      if (k >= n_jobs) return;
      size_t added_index = k < n_added ? k : (k - n_added) / n_policies;
      RowRunOptions run;
      const size_t variant = k < n_added ? 0 : (k - n_added) % n_policies;
      run.policy = k < n_added ? PolicyKind::kNone : options.policies[variant / n_controls];
      // The reference is the unmanaged job: no policy, no target, AllMax.
      run.training_control = k < n_added ? TrainingControl::kLocks : options.training_controls[variant % n_controls];
      run.training_job = options.training_job;
      run.servers = ServersFor(config.row.baseline_servers, options.added_fractions[added_index]);
      run.duration_s = options.duration_s;
      run.seed = options.seed;
      run.keep_power_samples = false;
      results[k] = simulate(run);
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        const auto& r = results[k];
        const bool trains = k >= n_added && TrainingServersFor(config, run.servers) > 0;
        progress(PolicyName(run.policy) + (trains ? "+" + TrainingControlName(run.training_control) : std::string()) +
                 " with " + std::to_string(run.servers) +
                 " servers: " + (r.ok() ? std::to_string(r->brake_events) + " brake events" : r.error().message));
      }
    }
  };
  const int jobs = static_cast<int>(std::clamp<size_t>(static_cast<size_t>(std::max(1, options.jobs)), 1, n_jobs));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  SweepResult sweep;
  sweep.baseline_servers = config.row.baseline_servers;
  sweep.added_fractions = options.added_fractions;
  for (size_t k = 0; k < n_jobs; ++k) {
    if (!results[k].ok()) return results[k].error();
  }
  for (size_t i = 0; i < n_added; ++i) {
    sweep.references.push_back(std::move(results[i]).value());
    sweep.simulated_s += options.duration_s;
  }
  sweep.max_added_held.assign(n_policies, -1);
  std::vector<bool> still_holding(n_policies, true);
  for (size_t i = 0; i < n_added; ++i) {
    for (size_t p = 0; p < n_policies; ++p) {
      SweepPoint point;
      point.added_fraction = options.added_fractions[i];
      point.run = std::move(results[n_added + i * n_policies + p]).value();
      point.servers = point.run.servers;
      point.impact = CompareRuns(point.run, sweep.references[i]);
      point.meets_slos = MeetsSlos(point.impact);
      // A row above its budget holds nothing, brake or not (a policy whose readings never came).
      point.holds = point.meets_slos && point.run.brake_events == 0 && point.run.seconds_above_budget == 0;
      if (still_holding[p] && point.holds) sweep.max_added_held[p] = point.added_fraction;
      if (!point.holds) still_holding[p] = false;
      sweep.simulated_s += options.duration_s;
      sweep.points.push_back(std::move(point));
    }
  }
  return sweep;
}

}  // namespace

Result<SweepResult> RunSweep(const PolcaConfig& config, const RequestTrace& trace, const SweepOptions& options,
                             const std::function<void(const std::string&)>& progress) {
  return Sweep(
      config, [&](const RowRunOptions& run) { return SimulateRow(config, trace, run); }, options, progress);
}

Result<SweepResult> RunSweep(const PolcaConfig& config, const TraceTimeline& timeline, const SweepOptions& options,
                             const std::function<void(const std::string&)>& progress) {
  return Sweep(
      config, [&](const RowRunOptions& run) { return SimulateRow(config, timeline, run); }, options, progress);
}

}  // namespace wattcut::polca
