#include "wattcut/row_control/planning_server_client.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "wattcut/base/printable_text.h"
#include "wattcut/http/path_segment.h"
#include "wattcut/row_control/answer_json.h"

namespace wattcut::row_control {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxPowerTargetAnswerBytes = size_t{1} << 20;  // a power-target answer is ~600 bytes

}  // namespace

Result<JobPowerTarget> JobPowerTargetOf(const std::string& body) {
  auto doc = ParseObject(body);
  if (!doc.ok()) return doc.error();
  JobPowerTarget out;
  auto target = doc->find("power_target");
  if (target == doc->end()) return kAnswerFields.Expected(FieldOf(*doc, "power_target"), "an object or null");
  if (target->is_object()) {
    const bool peak = target->contains("peak_power_per_gpu_w");
    auto w = NumberField(*target, peak ? "peak_power_per_gpu_w" : "avg_power_per_gpu_w",
                         peak ? "power_target.peak_power_per_gpu_w" : "power_target.avg_power_per_gpu_w", 0);
    if (!w.ok()) return w.error();
    out.target_w = *w;
    if (target->contains("reason")) {
      auto reason = StringField(*target, "reason", "power_target.reason");
      if (!reason.ok()) return reason.error();
      out.reason = *reason;
    }
    auto kind = StringField(*doc, "kind", "kind");
    if (!kind.ok()) return kind.error();
    out.kind = *kind;
  } else if (!target->is_null()) {
    return kAnswerFields.Expected(FieldOf(*doc, "power_target"), "an object or null");
  }
  auto applied = BoolField(*doc, "applied", "applied");
  if (!applied.ok()) return applied.error();
  out.applied = *applied;
  auto deployment = doc->find("deployment");
  if (deployment == doc->end() || !deployment->is_object()) {
    return Error::Malformed("field 'deployment': expected an object");
  }
  auto version = NumberField(*deployment, "version", "deployment.version", 0);
  if (!version.ok()) return version.error();
  out.deployment_version = static_cast<uint64_t>(*version);
  auto past = BoolField(*deployment, "every_rank_past_apply_step", "deployment.every_rank_past_apply_step");
  if (!past.ok()) return past.error();
  out.every_rank_past_apply_step = *past;
  if (out.target_w && out.applied) {
    auto met = BoolField(*doc, "met", "met");
    if (!met.ok()) return met.error();
    out.met = *met;
    auto point = NumberField(*doc, "point_power_per_gpu_w", "point_power_per_gpu_w", 0);
    if (!point.ok()) return point.error();
    out.point_power_per_gpu_w = *point;
  }
  if (auto note = doc->find("note"); note != doc->end() && note->is_string()) out.note = note->get<std::string>();
  return out;
}

PlanningServerClient::PlanningServerClient(std::string base_url, std::unique_ptr<http::HttpClient> client)
    : base_url_(std::move(base_url)), client_(std::move(client)) {}

Result<std::unique_ptr<PlanningServerClient>> PlanningServerClient::Create(const std::string& base_url,
                                                                           const std::string& token,
                                                                           const AgentTimeouts& timeouts) {
  auto url = ParseServiceUrl(base_url, "planning server URL");
  if (!url.ok()) return url.error();
  http::HttpEndpoint endpoint;
  endpoint.base_url = *url;
  endpoint.bearer_token = token;
  endpoint.connect_timeout_s = timeouts.connect_timeout_s;
  endpoint.timeout_s = timeouts.request_timeout_s;
  endpoint.max_response_bytes = kMaxPowerTargetAnswerBytes;
  auto client = http::HttpClient::Create(endpoint);
  if (!client.ok()) return client.error().WithContext("planning server " + *url + ": ");
  return std::unique_ptr<PlanningServerClient>(new PlanningServerClient(*url, std::move(*client)));
}

Result<JobPowerTarget> PlanningServerClient::Call(std::string_view method, const std::string& job_id,
                                                  const std::string& body) {
  const std::string path = "/v1/jobs/" + http::EncodePathSegment(job_id) + "/power_target";
  const std::string where =
      "planning server " + base_url_ + ": job " + PrintableText(job_id, 256) + ": " + std::string(method) + " " + path;
  auto answer = client_->Request(method, path, body);
  if (!answer.ok()) return answer.error().WithContext(where + ": ");
  if (answer->status < 200 || answer->status >= 300) return RefusalOf(*answer).WithContext(where + ": ");
  auto target = JobPowerTargetOf(answer->body);
  if (!target.ok()) return target.error().WithContext(where + ": ");
  return target;
}

Result<JobPowerTarget> PlanningServerClient::SetPeakPowerTarget(const std::string& job_id, double per_gpu_w,
                                                                const std::string& reason, double lease_s) {
  return Call("PUT", job_id,
              json{{"peak_power_per_gpu_w", per_gpu_w}, {"reason", reason}, {"lease_s", lease_s}}.dump());
}

Result<JobPowerTarget> PlanningServerClient::GetPowerTarget(const std::string& job_id) {
  return Call("GET", job_id, "");
}

Result<JobPowerTarget> PlanningServerClient::ClearPowerTarget(const std::string& job_id) {
  return Call("DELETE", job_id, "");
}

}  // namespace wattcut::row_control
