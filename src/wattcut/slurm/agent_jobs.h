// What the Slurm plugin asks the node agent about a job, as root on the agent's socket
// (docs/agent.md "Batch jobs"): register the job and get its credential for the job's tasks
// (PUT /v1/jobs/{id}), and end it at its epilog, getting the energy its GPUs used (DELETE).
// Every call is bounded (2 s to connect, 10 s in all), so a slow or dead agent delays a task's start
// or an epilog by seconds at most; errors come back as values for the plugin to log.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::slurm {

struct AgentJobCredential {
  std::string credential;
  std::vector<int> gpus;
};

// Registers job `job_id` of `uid` on `gpus` (nullopt: every GPU of the node), or finds it
// registered: the job's credential.
Result<AgentJobCredential> RegisterJobAtAgent(const std::string& socket, const std::string& job_id, int uid,
                                              const std::optional<std::vector<int>>& gpus);

// What a job's GPUs used on this node, and when it ended, what ending it did.
struct AgentJobEnd {
  std::vector<int> gpus;
  double duration_s = 0;
  std::optional<double> gpu_energy_j;  // nullopt: a GPU without an energy counter
  std::vector<std::string> problems;
  int leases_ended = 0;  // the two below: only when the job ended (EndJobAtAgent)
  std::vector<int> reset_gpus;
};

// What job `job_id`'s GPUs used so far (GET /v1/jobs/{id}); kNotFound as below.
Result<AgentJobEnd> JobEnergyAtAgent(const std::string& socket, const std::string& job_id);

// Ends job `job_id` at the agent. kNotFound when the agent does not know the job (it was down at
// the job's start, or the job never reached the node).
Result<AgentJobEnd> EndJobAtAgent(const std::string& socket, const std::string& job_id);

}  // namespace wattcut::slurm
