#include "wattcut/slurm/agent_jobs.h"

#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"
#include "wattcut/http/http_client.h"
#include "wattcut/http/http_status.h"

namespace wattcut::slurm {

using nlohmann::json;

namespace {

Result<http::HttpResponse> AskAgent(const std::string& socket, std::string_view method, const std::string& path,
                                    const std::string& body) {
  http::HttpEndpoint endpoint;
  endpoint.unix_socket = socket;
  endpoint.connect_timeout_s = 2;
  endpoint.timeout_s = 10;
  endpoint.max_response_bytes = 1 << 20;
  auto client = http::HttpClient::Create(endpoint);
  if (!client.ok()) return client.error();
  return (*client)->Request(method, path, body);
}

Result<json> JsonObject(const http::HttpResponse& response, const std::string& what) {
  json doc = ParseJsonOrDiscarded(response.body);
  if (!doc.is_object()) return Error::Malformed(what + ": the agent's answer is not a JSON object");
  return doc;
}

}  // namespace

Result<AgentJobCredential> RegisterJobAtAgent(const std::string& socket, const std::string& job_id, int uid,
                                              const std::optional<std::vector<int>>& gpus) {
  const std::string what = "registering job " + job_id + " at the agent (unix:" + socket + ")";
  json body = {{"uid", uid}};
  if (gpus) body["gpus"] = *gpus;
  auto response = AskAgent(socket, "PUT", "/v1/jobs/" + job_id, body.dump());
  if (!response.ok()) return response.error().WithContext(what + ": ");
  if (response->status != 200 && response->status != 201)
    return http::RefusalOf(response->status, response->body, what, "agent");
  auto doc = JsonObject(*response, what);
  if (!doc.ok()) return doc.error();
  AgentJobCredential credential;
  try {
    credential.credential = doc->at("credential").get<std::string>();
    credential.gpus = doc->at("gpus").get<std::vector<int>>();
  } catch (const json::exception& e) {
    return Error::Malformed(what + ": the agent's answer lacks a field: " + e.what());
  }
  return credential;
}

namespace {

// The energy fields of GET and DELETE /v1/jobs/{id}, and with `ended` what ending the job did.
Result<AgentJobEnd> JobEndOf(const http::HttpResponse& response, const std::string& what, bool ended) {
  if (response.status != 200) return http::RefusalOf(response.status, response.body, what, "agent");
  auto doc = JsonObject(response, what);
  if (!doc.ok()) return doc.error();
  AgentJobEnd end;
  try {
    end.gpus = doc->at("gpus").get<std::vector<int>>();
    end.duration_s = doc->at("duration_s").get<double>();
    if (!doc->at("gpu_energy_j").is_null()) end.gpu_energy_j = doc->at("gpu_energy_j").get<double>();
    end.problems = doc->at("problems").get<std::vector<std::string>>();
    if (ended) {
      end.leases_ended = doc->at("leases_ended").get<int>();
      end.reset_gpus = doc->at("reset_gpus").get<std::vector<int>>();
    }
  } catch (const json::exception& e) {
    return Error::Malformed(what + ": the agent's answer lacks a field: " + e.what());
  }
  return end;
}

}  // namespace

Result<AgentJobEnd> JobEnergyAtAgent(const std::string& socket, const std::string& job_id) {
  const std::string what = "reading job " + job_id + "'s energy at the agent (unix:" + socket + ")";
  auto response = AskAgent(socket, "GET", "/v1/jobs/" + job_id, "");
  if (!response.ok()) return response.error().WithContext(what + ": ");
  return JobEndOf(*response, what, /*ended=*/false);
}

Result<AgentJobEnd> EndJobAtAgent(const std::string& socket, const std::string& job_id) {
  const std::string what = "ending job " + job_id + " at the agent (unix:" + socket + ")";
  auto response = AskAgent(socket, "DELETE", "/v1/jobs/" + job_id, "");
  if (!response.ok()) return response.error().WithContext(what + ": ");
  return JobEndOf(*response, what, /*ended=*/true);
}

}  // namespace wattcut::slurm
