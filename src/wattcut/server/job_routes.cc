#include "wattcut/server/job_routes.h"

#include <optional>
#include <utility>

#include "wattcut/http/bounded_http_server.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/route_answers.h"

namespace wattcut::server {

namespace {

using Request = httplib::Request;
using Response = httplib::Response;

// Parses the body with `parse`, and on success answers with `then` (`ok_status` when it
// succeeds); a body that is not JSON is a 400, one with a wrong field a 422.
template <typename T, typename Then>
void WithBody(const std::string& body, Response& res, Result<T> (*parse)(const nlohmann::json&), const Then& then,
              int ok_status = 200) {
  std::optional<T> value;
  {
    auto json = ParseJsonBody(body);
    if (!json) return SetAnswer(res, json.error());
    auto parsed = parse(*json);
    if (!parsed) return SetAnswer(res, parsed.error());
    value = std::move(*parsed);
  }  // the JSON tree is freed before the work starts
  SetAnswer(res, then(*value), ok_status);
}

Result<int64_t> QueryInteger(const Request& req, const char* name, std::optional<int64_t> fallback) {
  if (!req.has_param(name)) {
    if (fallback) return *fallback;
    return Error{std::string("query parameter '") + name + "' is required"};
  }
  auto value = ParseNonNegativeInteger(name, req.get_param_value(name));
  if (!value) return Error{"query parameter " + value.error().message};
  return value;
}

// A route that names a job (the pattern's first group) and reads nothing else: the registry's
// `answer` for it, `ok_status` when it succeeds.
RouteHandler OfJob(JobRegistry& reg, Answer (JobRegistry::*answer)(const std::string&), int ok_status = 200) {
  return [&reg, answer, ok_status](const Request& req, const std::string&, Response& res) {
    SetAnswer(res, (reg.*answer)(req.matches[1]), ok_status);
  };
}

// A route that names a job and sends a body of T (read by `parse`): the registry's `answer` for both.
template <typename T>
RouteHandler OfJobAndBody(JobRegistry& reg, Result<T> (*parse)(const nlohmann::json&),
                          Answer (JobRegistry::*answer)(const std::string&, const T&), int ok_status = 200) {
  return [&reg, parse, answer, ok_status](const Request& req, const std::string& body, Response& res) {
    const std::string job_id = req.matches[1];
    WithBody(
        body, res, parse, [&](const T& value) { return (reg.*answer)(job_id, value); }, ok_status);
  };
}

// A page of a job's list: ?offset= (0) and ?limit= (`default_limit`).
RouteHandler PageOfJob(JobRegistry& reg, Answer (JobRegistry::*page)(const std::string&, int64_t, int64_t),
                       int64_t default_limit) {
  return [&reg, page, default_limit](const Request& req, const std::string&, Response& res) {
    auto offset = QueryInteger(req, "offset", 0);
    if (!offset) return SetAnswer(res, offset.error());
    auto limit = QueryInteger(req, "limit", default_limit);
    if (!limit) return SetAnswer(res, limit.error());
    SetAnswer(res, (reg.*page)(req.matches[1], *offset, *limit));
  };
}

// GET /schedule/{id}?rank=: the round's schedule. A rank that waits for its round holds its
// connection and a record, not this worker: its answer is deferred (http/deferred_response.h) and
// sent when the round completes, its deadline passes, the job is deleted or the server stops; a
// client that goes away first leaves the round (it may ask again).
RouteHandler WaitForSchedule(JobRegistry& reg) {
  return [&reg](const Request& req, const std::string&, Response& res) {
    auto rank = QueryInteger(req, "rank", std::nullopt);
    if (!rank) return SetAnswer(res, rank.error());
    std::optional<Answer> now = reg.WaitForSchedule(req.matches[1], *rank, [&reg, &req](const RoundWait& wait) {
      auto later = http::BoundedHttpServer::Defer(req, {[&reg, wait] { reg.AbandonRoundWait(wait); }});
      if (!later) return RoundReply{};
      return RoundReply{[later](Answer answer) {
        Reply reply = ReplyOf(answer);
        later->Send(reply.status, std::move(reply.body));
      }};
    });
    if (now) SetAnswer(res, *now);
  };
}

// GET /v1/jobs/{id}/schedule?rank=: what the next round would serve now (no waiting).
RouteHandler PreviewSchedule(JobRegistry& reg) {
  return [&reg](const Request& req, const std::string&, Response& res) {
    auto rank = QueryInteger(req, "rank", std::nullopt);
    if (!rank) return SetAnswer(res, rank.error());
    SetAnswer(res, reg.PreviewSchedule(req.matches[1], *rank));
  };
}

// GET /v1/jobs/{id}/deployment?rank=&step=&version=
RouteHandler DeploymentForRank(JobRegistry& reg) {
  return [&reg](const Request& req, const std::string&, Response& res) {
    auto rank = QueryInteger(req, "rank", std::nullopt);
    if (!rank) return SetAnswer(res, rank.error());
    auto step = QueryInteger(req, "step", 0);
    if (!step) return SetAnswer(res, step.error());
    auto version = QueryInteger(req, "version", 0);
    if (!version) return SetAnswer(res, version.error());
    SetAnswer(res, reg.FetchDeployment(req.matches[1], *rank, *step, static_cast<uint64_t>(*version)));
  };
}

// PUT /v1/jobs/{id}/measured-energy/{node}
RouteHandler NodeMeasurement(JobRegistry& reg) {
  return [&reg](const Request& req, const std::string& body, Response& res) {
    const std::string job_id = req.matches[1];
    const std::string node = req.matches[2];
    WithBody(body, res, &NodeGpuEnergy::FromJson,
             [&](const NodeGpuEnergy& report) { return reg.ReportMeasuredGpuEnergy(job_id, node, report); });
  };
}

}  // namespace

std::vector<Route> JobRoutes(JobRegistry& reg) {
  const std::string job = R"(/v1/jobs/([^/]+))";
  return {
      // ---- Zeus pipeline frequency optimizer API
      {"POST", "/register_job", "register_job", false,
       [&reg](const Request&, const std::string& body, Response& res) {
         WithBody(body, res, &JobRegistrationFromJson, [&reg](const JobRegistration& r) { return reg.RegisterJob(r); });
       }},
      {"POST", R"(/register_rank/([^/]+))", "register_rank", false,
       OfJobAndBody(reg, &RankInfoFromJson, &JobRegistry::RegisterRank)},
      {"GET", R"(/schedule/([^/]+))", "schedule", false, WaitForSchedule(reg)},
      {"POST", R"(/result/([^/]+))", "result", true,
       OfJobAndBody(reg, &ProfilingResultFromJson, &JobRegistry::PostResult)},
      // ---- wattcut API, version 1
      {"GET", "/v1/jobs", "v1_jobs", false,
       [&reg](const Request&, const std::string&, Response& res) { SetAnswer(res, reg.ListJobs()); }},
      {"GET", job, "v1_job", false, OfJob(reg, &JobRegistry::GetJob)},
      {"DELETE", job, "v1_job", true, OfJob(reg, &JobRegistry::DeleteJob)},
      {"PUT", job + "/planner", "v1_planner", true, OfJobAndBody(reg, &PlannerPatchFromJson, &JobRegistry::SetPlanner)},
      {"PUT", job + "/profile", "v1_profile", true,
       OfJobAndBody(reg, &ProfileUploadFromJson, &JobRegistry::UploadProfile, 202)},
      {"POST", job + "/rank_profiles", "v1_rank_profiles", true,
       OfJobAndBody(reg, &RankProfileFromJson, &JobRegistry::UploadRankProfile)},
      {"GET", job + "/frontier", "v1_frontier", false, OfJob(reg, &JobRegistry::FrontierStatus)},
      {"POST", job + "/frontier", "v1_frontier", true, OfJob(reg, &JobRegistry::ComputeFrontierNow, 202)},
      {"GET", job + "/frontier/points", "v1_frontier_points", false,
       PageOfJob(reg, &JobRegistry::FrontierPoints, 1000)},
      {"PUT", job + "/plan", "v1_plan", true, OfJobAndBody(reg, &PlanSelectionFromJson, &JobRegistry::SelectPlan)},
      {"PUT", job + "/power_target", "v1_power_target", true,
       OfJobAndBody(reg, &PowerTargetFromJson, &JobRegistry::SetPowerTarget)},
      {"DELETE", job + "/power_target", "v1_power_target", true, OfJob(reg, &JobRegistry::ClearPowerTarget)},
      {"GET", job + "/power_target", "v1_power_target", false, OfJob(reg, &JobRegistry::GetPowerTarget)},
      {"PUT", job + "/deadline_schedule", "v1_deadline_schedule", true,
       OfJobAndBody(reg, &DeadlineScheduleSpec::FromRequestJson, &JobRegistry::SetDeadlineSchedule)},
      {"DELETE", job + "/deadline_schedule", "v1_deadline_schedule", true,
       OfJob(reg, &JobRegistry::ClearDeadlineSchedule)},
      {"GET", job + "/deadline_schedule", "v1_deadline_schedule", false, OfJob(reg, &JobRegistry::GetDeadlineSchedule)},
      // A node's measurement writes the job's stored state: refused where every job-writing route is.
      {"PUT", job + "/measured-energy/([^/]+)", "v1_measured_energy", true, NodeMeasurement(reg)},
      {"GET", job + "/measured-energy", "v1_measured_energy", false,
       PageOfJob(reg, &JobRegistry::MeasuredGpuEnergyNodes, kMaxMeasuredNodesPerPage)},
      {"GET", job + "/stragglers", "v1_stragglers", false, OfJob(reg, &JobRegistry::ListStragglers)},
      {"POST", job + "/stragglers", "v1_stragglers", true,
       OfJobAndBody(reg, &StragglerReportFromJson, &JobRegistry::ReportStraggler)},
      {"GET", job + "/schedule", "v1_schedule", false, PreviewSchedule(reg)},
      {"GET", job + "/deployment", "v1_deployment", false, DeploymentForRank(reg)},
  };
}

}  // namespace wattcut::server
