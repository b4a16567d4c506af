// The epilog's report of a job's GPU energy on one node to the planning server (docs/server.md:
// PUT /v1/jobs/{id}/measured-energy/{node}), so that its status page shows it beside the planner's
// estimate. The server knows the job by the name its ranks registered it with (job_metadata
// "slurm-JOBID", task_environment.h): the most recently registered job of that name gets it.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/slurm/agent_jobs.h"

namespace wattcut::slurm {

struct ServerReportTarget {
  std::string server_url;  // http://HOST:PORT
  std::string token;       // "" without one
};

// kNotFound when the server has no job of that name (the job never reached it: --wattcut=off, or
// it ran unmanaged); other errors as the server or the network gave them. Bounded: 2 s to connect,
// 10 s a request.
Status ReportJobEnergy(const ServerReportTarget& target, const std::string& job_name, const std::string& node,
                       const AgentJobEnd& end);

}  // namespace wattcut::slurm
