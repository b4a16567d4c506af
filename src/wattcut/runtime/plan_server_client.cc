#include "wattcut/runtime/plan_server_client.h"

#include <httplib.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "wattcut/base/json_object.h"
#include "wattcut/http/http_status.h"
#include "wattcut/http/path_segment.h"
#include "wattcut/http/service_url.h"

namespace wattcut {
namespace {

using nlohmann::json;

// The server answers errors as {"error": "..."}; anything else is shown as it came.
std::string ErrorMessage(const std::string& body) {
  json doc = ParseJsonOrDiscarded(body);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_string()) return doc["error"].get<std::string>();
  return body.size() > 500 ? body.substr(0, 500) + "..." : body;
}

std::pair<time_t, time_t> SecondsAndMicros(double s) {
  const double whole = std::floor(s);
  return {static_cast<time_t>(whole), static_cast<time_t>((s - whole) * 1e6)};
}

}  // namespace

std::string EncodeJobIdForPath(const std::string& job_id) { return http::EncodePathSegment(job_id); }

Result<PlanServerClient> PlanServerClient::Create(const PlanServerAddress& address) {
  auto url = http::SplitServiceUrl(address.url, "wattcut server URL", http::kPlanServerUrlForm);
  if (!url.ok()) return url.error();
  if (!(address.connect_timeout_s > 0)) return Error{"wattcut server connect timeout must be positive"};
  PlanServerAddress normalised = address;
  normalised.url = url->url;
  return PlanServerClient(std::move(normalised), std::move(url->host), std::stoi(url->port));
}

Result<std::string> PlanServerClient::Call(const std::string& method, const std::string& path, const std::string& body,
                                           double read_timeout_s) const {
  // cpp-httplib resolves the host at each call and tries its addresses in order until one
  // connects (a "localhost" that is ::1 and 127.0.0.1 reaches a server on either).
  httplib::Client client(host_, port_);
  client.set_url_encode(false);  // paths are encoded here
  client.set_tcp_nodelay(true);  // a POST is written in two parts: no waiting for a delayed ACK (40 ms)
  const auto [connect_s, connect_us] = SecondsAndMicros(address_.connect_timeout_s);
  client.set_connection_timeout(connect_s, connect_us);
  const auto [read_s, read_us] = SecondsAndMicros(read_timeout_s);
  client.set_read_timeout(read_s, read_us);
  client.set_write_timeout(connect_s, connect_us);
  httplib::Headers headers;
  if (!address_.bearer_token.empty()) headers.emplace("Authorization", "Bearer " + address_.bearer_token);
  httplib::Result result =
      method == "GET" ? client.Get(path, headers) : client.Post(path, headers, body, "application/json");
  if (!result) {
    return Error::Unavailable(method + " " + path + ": cannot reach the wattcut server at " + address_.url + ": " +
                              httplib::to_string(result.error()));
  }
  if (result->status != 200) {
    return Error{method + " " + path + ": HTTP " + std::to_string(result->status) + ": " + ErrorMessage(result->body),
                 // Any 5xx of the planning server means "retry later" (the rank's background thread
                 // keeps asking); the agent's 500 (an NVML error) is http_status.h's default.
                 http::ErrorCodeForStatus(result->status, ErrorCode::kUnavailable)};
  }
  return result->body;
}

Result<std::string> PlanServerClient::RegisterJob(const TrainingJobInfo& job) const {
  json body = {{"job_id", ""},
               {"pp_degree", job.pp_degree},
               {"dp_degree", job.dp_degree},
               {"tp_degree", job.tp_degree},
               {"world_size", job.world_size}};
  body["job_metadata"] = job.job_metadata.empty() ? json(nullptr) : json(job.job_metadata);
  json planner = json::object();
  if (job.num_microbatches > 0) planner["num_microbatches"] = job.num_microbatches;
  if (!job.schedule.empty()) planner["schedule"] = job.schedule;
  if (job.virtual_stages > 0) planner["virtual_stages"] = job.virtual_stages;
  if (job.unit_time_s > 0) planner["unit_time_s"] = job.unit_time_s;
  if (job.p2p_power_w > 0) planner["p2p_power_w"] = job.p2p_power_w;
  if (!planner.empty()) body["planner"] = planner;
  const std::string path = "/register_job";
  auto response = Call("POST", path, body.dump(), address_.connect_timeout_s);
  if (!response) return response.error();
  json id = ParseJsonOrDiscarded(*response);
  if (!id.is_string() || id.get<std::string>().empty()) {
    return Error::Malformed("POST " + path + ": the server returned a strange job id: " + *response);
  }
  return id.get<std::string>();
}

Status PlanServerClient::RegisterRank(const std::string& job_id, const TrainingRankIds& ids,
                                      const std::vector<int>& available_freqs_mhz) const {
  json body = {{"rank", ids.rank},
               {"dp_rank", ids.dp_rank},
               {"pp_rank", ids.pp_rank},
               {"tp_rank", ids.tp_rank},
               {"available_frequencies", available_freqs_mhz}};
  const std::string path = "/register_rank/" + EncodeJobIdForPath(job_id);
  auto response = Call("POST", path, body.dump(), address_.connect_timeout_s);
  if (!response) return response.error();
  return Status::Ok();
}

Result<RankSchedule> PlanServerClient::FetchSchedule(const std::string& job_id, int rank, double timeout_s) const {
  const std::string path = "/schedule/" + EncodeJobIdForPath(job_id) + "?rank=" + std::to_string(rank);
  auto response = Call("GET", path, "", timeout_s);
  if (!response) return response.error();
  auto schedule = ParseRankScheduleJson(*response, rank);
  if (!schedule) return schedule.error().WithContext("GET " + path + ": ");
  return schedule;
}

Result<DeploymentAnswer> PlanServerClient::FetchDeployment(const std::string& job_id, int rank, uint64_t step,
                                                           uint64_t version) const {
  const std::string path = "/v1/jobs/" + EncodeJobIdForPath(job_id) + "/deployment?rank=" + std::to_string(rank) +
                           "&step=" + std::to_string(step) + "&version=" + std::to_string(version);
  auto response = Call("GET", path, "", address_.connect_timeout_s);
  if (!response) return response.error();
  auto answer = ParseDeploymentAnswer(*response, version);
  if (!answer) return answer.error().WithContext("GET " + path + ": ");
  return answer;
}

Result<std::string> RankProfileJson(const TrainingRankIds& ids, const std::vector<ProfiledRow>& rows) {
  json body = {{"rank", ids.rank}, {"dp_rank", ids.dp_rank}, {"pp_rank", ids.pp_rank}, {"tp_rank", ids.tp_rank}};
  // A zero-bubble job's rank runs backward_input (B) and backward_weight (W): both are
  // uploaded as measured (backward_input_time, ...), so the server plans their measured
  // ratio; a whole backward the rank measured goes as backward_time / backward_energy.
  std::map<std::string, json> fields;
  for (const char* name : {"forward", "backward", "backward_input", "backward_weight"}) {
    fields[std::string(name) + "_time"] = json::object();
    fields[std::string(name) + "_energy"] = json::object();
  }
  for (const ProfiledRow& row : rows) {
    if (row.instruction != "forward" && row.instruction != "backward" && row.instruction != "backward_input" &&
        row.instruction != "backward_weight") {
      return Error{"rank profile: instruction '" + row.instruction +
                   "' cannot be uploaded (expected forward, backward, backward_input or backward_weight)"};
    }
    fields[row.instruction + "_time"][std::to_string(row.freq_mhz)] = row.time_s;
    fields[row.instruction + "_energy"][std::to_string(row.freq_mhz)] = row.energy_j;
  }
  const json& input = fields["backward_input_time"];
  const json& weight = fields["backward_weight_time"];
  for (const auto& [one, other] : {std::pair{&input, &weight}, std::pair{&weight, &input}}) {
    for (const auto& [freq, value] : one->items()) {
      if (!other->contains(freq)) {
        return Error{"rank profile: " + freq +
                     " MHz has only one of backward_input and backward_weight (a split backward needs both)"};
      }
    }
  }
  if (fields["forward_time"].empty()) return Error{"rank profile: no forward measurements to upload"};
  if (fields["backward_time"].empty() && input.empty()) {
    return Error{"rank profile: no backward measurements to upload (backward, or backward_input and backward_weight)"};
  }
  for (auto& [name, value] : fields) {
    if (!value.empty()) body[name] = value;
  }
  return body.dump();
}

Status PlanServerClient::UploadRankProfile(const std::string& job_id, const TrainingRankIds& ids,
                                           const std::vector<ProfiledRow>& rows) const {
  auto body = RankProfileJson(ids, rows);
  if (!body) return body.error();
  const std::string path = "/v1/jobs/" + EncodeJobIdForPath(job_id) + "/rank_profiles";
  auto response = Call("POST", path, *body, address_.connect_timeout_s);
  if (!response) return response.error();
  return Status::Ok();
}

Status CheckStragglerUpdate(const StragglerUpdate& update) {
  const int given = (update.slowdown ? 1 : 0) + (update.iteration_time_s ? 1 : 0) + (update.recovered ? 1 : 0);
  if (given != 1) {
    return Error{"straggler report: give exactly one of slowdown, iteration_time_s or recovered"};
  }
  if (update.dp_rank < 0) return Error{"straggler report: dp_rank must be >= 0, got " + std::to_string(update.dp_rank)};
  return Status::Ok();
}

Status PlanServerClient::ReportStraggler(const std::string& job_id, const StragglerUpdate& update) const {
  if (Status s = CheckStragglerUpdate(update); !s.ok()) return s;
  json body = {{"dp_rank", update.dp_rank}};
  if (update.slowdown) body["slowdown"] = *update.slowdown;
  if (update.iteration_time_s) body["iteration_time_s"] = *update.iteration_time_s;
  if (update.recovered) body["recovered"] = true;
  const std::string path = "/v1/jobs/" + EncodeJobIdForPath(job_id) + "/stragglers";
  auto response = Call("POST", path, body.dump(), address_.connect_timeout_s);
  if (!response) return response.error();
  return Status::Ok();
}

}  // namespace wattcut
