#include "wattcut/slurm/server_energy_report.h"

#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"
#include "wattcut/http/http_client.h"
#include "wattcut/http/http_status.h"

namespace wattcut::slurm {

using nlohmann::json;

Status ReportJobEnergy(const ServerReportTarget& target, const std::string& job_name, const std::string& node,
                       const AgentJobEnd& end) {
  const std::string what = "reporting job " + job_name + "'s GPU energy to " + target.server_url;
  if (!end.gpu_energy_j) return Error::NotFound(what + ": the energy is unknown (a GPU has no energy counter)");
  http::HttpEndpoint endpoint;
  endpoint.base_url = target.server_url;
  while (!endpoint.base_url.empty() && endpoint.base_url.back() == '/') endpoint.base_url.pop_back();
  endpoint.bearer_token = target.token;
  endpoint.connect_timeout_s = 2;
  endpoint.timeout_s = 10;
  endpoint.max_response_bytes = 16 << 20;
  auto client = http::HttpClient::Create(endpoint);
  if (!client.ok()) return client.error().WithContext(what + ": ");

  auto listed = (*client)->Get("/v1/jobs");
  if (!listed.ok()) return listed.error().WithContext(what + ": ");
  if (listed->status != 200) return http::RefusalOf(listed->status, listed->body, what, "server");
  json jobs = ParseJsonOrDiscarded(listed->body);
  if (!jobs.is_object() || !jobs.contains("jobs") || !jobs["jobs"].is_array()) {
    return Error::Malformed(what + ": GET /v1/jobs answered no 'jobs' list");
  }
  // Ids begin with the registration's time, then its sequence number: the latest sorts last.
  std::string job_id;
  for (const json& job : jobs["jobs"]) {
    if (!job.is_object() || job.value("job_metadata", json()) != json(job_name)) continue;
    const std::string id = job.value("job_id", "");
    if (!id.empty() && id > job_id) job_id = id;
  }
  if (job_id.empty()) return Error::NotFound(what + ": the server has no job named " + job_name);

  const json body = {{"gpu_energy_j", *end.gpu_energy_j},
                     {"duration_s", end.duration_s},
                     {"gpus", end.gpus},
                     {"source", "slurm-epilog"}};
  auto put = (*client)->Request("PUT", "/v1/jobs/" + job_id + "/measured-energy/" + node, body.dump());
  if (!put.ok()) return put.error().WithContext(what + ": ");
  if (put->status != 200) return http::RefusalOf(put->status, put->body, what, "server");
  return Status::Ok();
}

}  // namespace wattcut::slurm
