// What a batch job's GPUs used: each GPU's energy counter now against its reading when the job was
// registered (job_table.h's NodeJob::energy_at_start_mj). The node agent answers it while the job
// runs (GET /v1/jobs/{id}) and when it ends (DELETE /v1/jobs/{id}, with what the end undid).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/agent/job_table.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut::agent {

// What a batch job's GPUs used since it was registered.
struct JobEnergy {
  NodeJob job;
  double duration_s = 0;
  // Each GPU's energy in joules; nullopt where the GPU has no energy counter, it could not be read,
  // or it went back (the driver was reloaded).
  std::map<int, std::optional<double>> gpu_energy_j;
  std::optional<double> total_gpu_energy_j;  // nullopt when any GPU's is unknown
  std::vector<std::string> problems;         // one line each
};

// What ending a batch job did, and what its GPUs used.
struct JobEnd : JobEnergy {
  int leases_ended = 0;
  std::vector<int> reset_gpus;  // the GPUs reset (the job had used them)
};

// What `job`'s GPUs used from its start to `now_unix_s`, their counters read from `backend` now.
JobEnergy MeasureJobEnergy(const NodeJob& job, GpuBackend& backend, double now_unix_s);

// Each of `gpus`' energy counter now (nullopt where it cannot be read): a job's energy_at_start_mj.
std::map<int, std::optional<int64_t>> ReadEnergyCounters(GpuBackend& backend, const std::vector<int>& gpus);

// One line for the log: "GPUs 0-3 used 123.4 J" or why the energy is unknown.
std::string JobEnergyText(const JobEnergy& energy);

}  // namespace wattcut::agent
