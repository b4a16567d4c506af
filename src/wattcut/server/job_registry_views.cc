// JobRegistry's views over every job, for the metrics and the status page (reads: nothing
// changes). Each job is read under its own lock, after the map's lock is let go (job_registry.h).
#include <algorithm>

#include "wattcut/server/job_measured_energy.h"
#include "wattcut/server/job_power_target.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/job_summaries.h"

namespace wattcut::server {

std::vector<PowerTargetGauge> JobRegistry::PowerTargetGauges() {
  std::vector<PowerTargetGauge> out;
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    if (job->deleted() || !job->power_target()) continue;
    out.push_back(PowerTargetGaugeOf(ViewPowerTarget(*job)));
  }
  return out;
}

std::vector<MeasuredGpuEnergyGauge> JobRegistry::MeasuredGpuEnergyGauges() {
  std::vector<MeasuredGpuEnergyGauge> out;
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    if (job->deleted() || job->measured_gpu_energy().empty()) continue;
    out.push_back(MeasuredGpuEnergyGaugeOf(*job));
  }
  return out;
}

JobStateCounts JobRegistry::CountJobStates() {
  JobStateCounts counts;
  {
    ReaderLock lock(mu_);
    counts.quarantined = static_cast<int64_t>(quarantined_.size());
  }
  for (const auto& job : AllJobs()) {
    MutexLock lock(job->mu());
    ++counts.by_frontier_state[static_cast<size_t>(job->frontier_state())];
  }
  return counts;
}

void JobRegistry::FillStatusView(ServerStatusView& view, size_t max_jobs) {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    ReaderLock lock(mu_);
    view.num_jobs = jobs_.size();
    view.num_quarantined = quarantined_.size();
    for (const auto& [id, job] : jobs_) jobs.push_back(job);
  }
  // The newest first (registration_order never changes once the job is in the map).
  const auto newer = [](const auto& a, const auto& b) { return a->registration_order() > b->registration_order(); };
  const size_t shown = std::min(max_jobs, jobs.size());
  std::partial_sort(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(shown), jobs.end(), newer);
  jobs.resize(shown);
  const double now = wall_clock_.NowS();
  for (const auto& job : jobs) {
    MutexLock lock(job->mu());
    view.jobs.push_back(JobStatus(*job, now));
  }
}

}  // namespace wattcut::server
