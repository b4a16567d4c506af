#include "wattcut/agent/job_energy.h"

#include <algorithm>
#include <cstdio>

#include "wattcut/base/index_ranges.h"

namespace wattcut::agent {

JobEnergy MeasureJobEnergy(const NodeJob& job, GpuBackend& backend, double now_unix_s) {
  JobEnergy energy;
  energy.job = job;
  energy.duration_s = std::max(0.0, now_unix_s - job.started_at_unix_s);
  double total_j = 0;
  bool all_known = true;
  for (int gpu : job.gpus) {
    std::optional<double> used_j;
    auto start = job.energy_at_start_mj.find(gpu);
    const bool started = start != job.energy_at_start_mj.end() && start->second.has_value();
    auto now_mj = backend.TotalEnergyMj(gpu);
    if (started && now_mj.ok() && *now_mj >= *start->second) {
      used_j = static_cast<double>(*now_mj - *start->second) / 1000.0;
      total_j += *used_j;
    } else {
      all_known = false;
      if (started && now_mj.ok()) {
        energy.problems.push_back("GPU " + std::to_string(gpu) +
                                  ": its energy counter went back (the driver was reloaded): energy unknown");
      }
    }
    energy.gpu_energy_j[gpu] = used_j;
  }
  if (all_known) energy.total_gpu_energy_j = total_j;
  return energy;
}

std::map<int, std::optional<int64_t>> ReadEnergyCounters(GpuBackend& backend, const std::vector<int>& gpus) {
  std::map<int, std::optional<int64_t>> counters;
  for (int gpu : gpus) {
    auto mj = backend.TotalEnergyMj(gpu);
    counters[gpu] = mj.ok() ? std::optional<int64_t>(*mj) : std::nullopt;
  }
  return counters;
}

std::string JobEnergyText(const JobEnergy& energy) {
  char joules[64];
  std::snprintf(joules, sizeof(joules), "%.1f J", energy.total_gpu_energy_j.value_or(0));
  return "GPUs " + IndexRangesText(energy.job.gpus) + " used " +
         (energy.total_gpu_energy_j ? std::string(joules) : std::string("an unknown energy (a GPU without a counter)"));
}

}  // namespace wattcut::agent
