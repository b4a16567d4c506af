#include "wattcut/agent/agent_routes.h"

#include <atomic>

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_answer.h"
#include "wattcut/agent/agent_metrics.h"
#include "wattcut/agent/agent_readings.h"
#include "wattcut/agent/agent_requests.h"
#include "wattcut/agent/agent_views.h"
#include "wattcut/base/error_code.h"
#include "wattcut/gpu/clock_kind.h"
#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

using nlohmann::json;

namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;
// Over TCP a lease lives on its connection, which the agent closes after kKeepAliveS idle.
constexpr int kMaxTcpLeaseTtlS = 30;

// The caller of this request, or an answer already written.
std::optional<AgentCaller> Caller(AgentTransport transport, const AgentRouteContext& context,
                                  const httplib::Request& req, httplib::Response& res, AgentScope needed) {
  const http::ConnectionInfo* connection = http::BoundedHttpServer::CurrentConnection();
  AgentCaller caller;
  if (connection == nullptr) {
    AnswerError(res, 500, "internal", "no connection information");
    return std::nullopt;
  }
  // A request refused before its body was read: the rest of the body must not be taken for the
  // next request on the connection.
  const bool unread_body = http::BoundedHttpServer::HasBody(req);
  if (auto refused = IdentifyCaller(transport, *connection, req.get_header_value("Authorization"), context.tokens,
                                    context.node, caller)) {
    if (unread_body) http::BoundedHttpServer::CloseAfterResponse();
    AnswerError(res, refused->status, refused->status == 401 ? "unauthenticated" : "permission_denied",
                refused->message);
    if (refused->status == 401) res.set_header("WWW-Authenticate", "Bearer");
    return std::nullopt;
  }
  if (!caller.Allows(needed)) {
    if (unread_body) http::BoundedHttpServer::CloseAfterResponse();
    AnswerError(res, 403, "permission_denied",
                std::string("this needs the '") + std::string(AgentScopeName(needed)) + "' scope" +
                    (transport == AgentTransport::kTcp ? ": present a token of that scope (--token-file)"
                                                       : ": present a token of that scope, or ask as root"));
    return std::nullopt;
  }
  return caller;
}

// A body read whole (bounded), or an answer already written.
std::optional<std::string> Body(const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& reader) {
  std::string body;
  const auto read = http::BoundedHttpServer::ReadBody(req, reader, kMaxBodyBytes, body);
  if (read.status != 0) {
    AnswerError(res, read.status, "malformed", read.error);
    return std::nullopt;
  }
  return body;
}

// The path's job id (/v1/jobs/{id}), or an answer already written.
std::optional<std::string> PathJobId(const httplib::Request& req, httplib::Response& res) {
  std::string id = req.matches[1].str();
  if (Status s = CheckJobId(id, "the path's job"); !s.ok()) {
    AnswerError(res, s.error());
    return std::nullopt;
  }
  return id;
}

// Who may ask a route: anyone (health, the API's description), a caller holding a scope, or the
// admin (root on the Unix socket: the Slurm plugin).
enum class Access { kAnyone, kRead, kTrain, kRow, kAdmin };
enum class Method { kGet, kPut, kPost, kDelete };

// One request to a /v1 route, its caller admitted and, for a route that takes one, its body read.
struct V1Request {
  const AgentRouteContext& context;
  AgentTransport transport;
  const AgentCaller& caller;
  const httplib::Request& req;
  httplib::Response& res;
  const std::string& body;
  const OpenStreams& open_streams;
  NodeAgent& node() const { return *context.node; }
};

struct V1Route {
  Method method;
  std::string pattern;
  Access access;
  bool reads_body;
  void (*handler)(const V1Request&);
};

// The admin check of a caller with the read scope; an answer written when it is not.
bool AdmitAdmin(const AgentCaller& caller, const httplib::Request& req, httplib::Response& res) {
  if (caller.admin) return true;
  if (http::BoundedHttpServer::HasBody(req)) http::BoundedHttpServer::CloseAfterResponse();
  AnswerError(res, 403, "permission_denied",
              "registering and ending jobs is root's, on the agent's Unix socket (the Slurm plugin does it)");
  return false;
}

// A route's request, from its caller to its answer. `reader` is nullptr for a method without a body.
void Serve(const V1Route& route, AgentTransport transport, const AgentRouteContext& context,
           const OpenStreams& open_streams, const httplib::Request& req, httplib::Response& res,
           const httplib::ContentReader* reader) {
  AgentCaller caller;
  if (route.access != Access::kAnyone) {
    static constexpr AgentScope kScopes[] = {AgentScope::kRead, AgentScope::kRead, AgentScope::kTrain, AgentScope::kRow,
                                             AgentScope::kRead};
    auto admitted = Caller(transport, context, req, res, kScopes[static_cast<int>(route.access)]);
    if (!admitted) return;
    caller = std::move(*admitted);
    if (route.access == Access::kAdmin && !AdmitAdmin(caller, req, res)) return;
  }
  std::string body;
  if (route.reads_body) {
    // A DELETE has no body to read: an empty reader.
    const httplib::ContentReader empty([](httplib::ContentReceiver) { return true; },
                                       [](httplib::MultipartContentHeader, httplib::ContentReceiver) { return true; });
    auto read = Body(req, res, reader != nullptr ? *reader : empty);
    if (!read) return;
    body = std::move(*read);
  }
  route.handler(V1Request{context, transport, caller, req, res, body, open_streams});
}

// --- The agent and its GPUs' readings.

void GetHealth(const V1Request& r) {
  const auto& problems = r.node().startup_problems();
  Answer(r.res, 200, json{{"status", problems.empty() ? "ok" : "degraded"}, {"startup_problems", problems}});
}

void GetOpenApi(const V1Request& r) {
  r.res.status = 200;
  r.res.set_content(AgentOpenApiYaml(), "application/yaml");
}

void GetAgent(const V1Request& r) {
  Answer(r.res, 200,
         json{{"api_version", 1},
              {"version", r.context.version},
              {"hostname", r.context.hostname},
              {"backend", r.node().backend_name()},
              {"gpu_count", r.node().gpus().size()},
              {"startup_problems", r.node().startup_problems()}});
}

void GetGpus(const V1Request& r) {
  json gpus = json::array();
  for (const GpuDescription& d : r.node().gpus()) gpus.push_back(GpuJson(d));
  Answer(r.res, 200, json{{"gpus", gpus}});
}

void GetReadings(const V1Request& r) { Answer(r.res, 200, ReadingsJson(r.context)); }

void GetServerReading(const V1Request& r) {
  for (const auto& [name, value] : r.req.params) {
    if (name != "gpu_power" || (value != "instant" && value != "power_usage")) {
      AnswerError(r.res, 400, "invalid_argument",
                  "GET /v1/readings/server takes only gpu_power=instant|power_usage, got '" + name + "'");
      return;
    }
  }
  Answer(r.res, 200, ServerReadingJson(r.context, r.req.get_param_value("gpu_power") == "instant"));
}

// A stream holds no worker: the listener's stream thread writes a line every interval
// (http/periodic_streams.h); at most kMaxReadingStreams at once on a listener.
void GetReadingsStream(const V1Request& r) {
  auto query = ParseStreamQuery(r.req.params);
  if (!Unwrap(query, r.res)) return;
  std::shared_ptr<void> slot = TakeStreamSlot(r.open_streams);  // held while the stream's producer lives
  if (!slot) {
    AnswerError(r.res, 503, "unavailable",
                std::to_string(kMaxReadingStreams) +
                    " readings streams are open on this listener: close one, or poll GET /v1/readings");
    return;
  }
  const StreamQuery q = *query;
  auto sent = std::make_shared<int64_t>(0);
  const AgentRouteContext* ctx = &r.context;
  http::BoundedHttpServer::StreamEvery(r.req, 200, "application/x-ndjson", {}, StreamPeriod(q.interval_s),
                                       [ctx, q, sent, slot]() -> http::StreamPiece {
                                         if (ctx->stopping != nullptr && *ctx->stopping) return {"", true};
                                         ++*sent;
                                         return {JsonText(ReadingsJson(*ctx)) + "\n", q.count && *sent >= *q.count};
                                       });
}

void GetMetrics(const V1Request& r) {
  static const AgentCounters kNoCounters;
  r.res.status = 200;
  r.res.set_content(
      RenderAgentMetrics(MetricsSnapshot(r.context), r.context.counters != nullptr ? *r.context.counters : kNoCounters),
      "text/plain; version=0.0.4; charset=utf-8");
}

void GetState(const V1Request& r) {
  json gpus = json::array();
  for (const GpuControl& control : r.node().Controls()) gpus.push_back(ControlJson(r.node(), control));
  Answer(r.res, 200, json{{"gpus", gpus}});
}

// --- Leases.

void PostLease(const V1Request& r) {
  auto request = ParseLeaseRequest(r.body);
  if (!Unwrap(request, r.res)) return;
  if (r.transport == AgentTransport::kTcp && request->ttl_s > kMaxTcpLeaseTtlS) {
    AnswerError(r.res, Error::InvalidArgument("'ttl_s': over TCP a lease lives on its connection: at most " +
                                              std::to_string(kMaxTcpLeaseTtlS) +
                                              " s, renewed every ttl_s / 3 to keep the connection open"));
    return;
  }
  auto lease = r.node().TakeLease(r.caller.holder, request->gpus, request->ttl_s);
  if (!Unwrap(lease, r.res)) return;
  Answer(r.res, 201, LeaseJson(*lease));
}

void PostLeaseRenewal(const V1Request& r) {
  auto id = ParseLeaseIdSegment(r.req.matches[1].str());
  if (!Unwrap(id, r.res)) return;
  auto lease = r.node().RenewLease(*id, r.caller.holder);
  if (!Unwrap(lease, r.res)) return;
  Answer(r.res, 200, LeaseJson(*lease));
}

void DeleteLease(const V1Request& r) {
  auto id = ParseLeaseIdSegment(r.req.matches[1].str());
  if (!Unwrap(id, r.res)) return;
  auto ended = r.node().ReleaseLease(*id, r.caller.holder);
  if (!Unwrap(ended, r.res)) return;
  Answer(r.res, 200, json{{"released", ended->lease.gpus}});
}

// --- Batch jobs: registered and ended by root on the socket (the Slurm plugin), listed to
// readers without their credentials.

void GetJobs(const V1Request& r) {
  json jobs = json::array();
  for (const NodeJob& job : r.node().Jobs()) jobs.push_back(JobJson(job, /*with_credential=*/false));
  Answer(r.res, 200, json{{"jobs", jobs}});
}

void GetJob(const V1Request& r) {
  const std::optional<std::string> id = PathJobId(r.req, r.res);
  if (!id) return;
  auto energy = r.node().JobEnergySoFar(*id);
  if (!Unwrap(energy, r.res)) return;
  Answer(r.res, 200, JobEnergyJson(*energy));
}

void PutJob(const V1Request& r) {
  const std::optional<std::string> id = PathJobId(r.req, r.res);
  if (!id) return;
  auto request = ParseJobRequest(r.body);
  if (!Unwrap(request, r.res)) return;
  auto registered = r.node().RegisterJob(*id, request->uid, request->gpus);
  if (!Unwrap(registered, r.res)) return;
  Answer(r.res, registered->created ? 201 : 200, JobJson(registered->job, /*with_credential=*/true));
}

void DeleteJob(const V1Request& r) {
  const std::optional<std::string> id = PathJobId(r.req, r.res);
  if (!id) return;
  auto ended = r.node().EndJob(*id);
  if (!Unwrap(ended, r.res)) return;
  Answer(r.res, 200, JobEndJson(*ended));
}

// --- One GPU's controls: the training side's (train scope) and the row side's ceiling (row scope).

// The path's GPU changed by `change`; its controls answered.
template <typename Change>
void AnswerGpuChange(const V1Request& r, Change change) {
  auto gpu = ParseGpuIndexSegment(r.req.matches[1].str());
  if (!Unwrap(gpu, r.res)) return;
  Result<GpuControl> control = change(*gpu);
  if (!Unwrap(control, r.res)) return;
  Answer(r.res, 200, ControlJson(r.node(), *control));
}

template <ClockKind kKind>
void PutClocks(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) -> Result<GpuControl> {
    auto range = ParseClockRangeRequest(r.body);
    if (!range.ok()) return range.error();
    return r.node().LockClocks(r.caller.holder, gpu, kKind, ClockRange{range->min_mhz, range->max_mhz});
  });
}

template <ClockKind kKind>
void DeleteClocks(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) { return r.node().UnlockClocks(r.caller.holder, gpu, kKind); });
}

void PutPowerLimit(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) -> Result<GpuControl> {
    auto limit = ParsePowerLimitRequest(r.body);
    if (!limit.ok()) return limit.error();
    return r.node().SetPowerLimit(r.caller.holder, gpu, limit->watts);
  });
}

void DeletePowerLimit(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) { return r.node().ResetPowerLimit(r.caller.holder, gpu); });
}

void PutCeiling(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) -> Result<GpuControl> {
    auto ceiling = ParseCeilingRequest(r.body, CeilingScope::kOneGpu);
    if (!ceiling.ok()) return ceiling.error();
    return r.node().SetCeiling(gpu, ceiling->mhz, ceiling->lease_s, ceiling->reason);
  });
}

void DeleteCeiling(const V1Request& r) {
  AnswerGpuChange(r, [&r](int gpu) { return r.node().ClearCeiling(gpu); });
}

// Every GPU's ceiling at once (the row controller's usual command). GPUs are checked first, so
// a bad one changes nothing; an NVML error on one GPU leaves the others set and is reported.
void PutCeilings(const V1Request& r) {
  auto ceiling = ParseCeilingRequest(r.body, CeilingScope::kAllGpus);
  if (!Unwrap(ceiling, r.res)) return;
  NodeAgent& node = r.node();
  std::vector<int> gpus = ceiling->gpus.value_or(std::vector<int>{});
  if (!ceiling->gpus) {
    for (const GpuDescription& d : node.gpus()) gpus.push_back(d.index);
  }
  for (int gpu : gpus) {
    if (gpu >= static_cast<int>(node.gpus().size())) {
      AnswerError(r.res, Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" +
                                         std::to_string(node.gpus().size()) + " GPUs)"));
      return;
    }
  }
  json answers = json::array();
  std::optional<Error> first_error;
  for (int gpu : gpus) {
    auto control = node.SetCeiling(gpu, ceiling->mhz, ceiling->lease_s, ceiling->reason);
    if (control.ok()) {
      answers.push_back(ControlJson(node, *control));
    } else {
      answers.push_back(json{{"gpu", gpu}, {"error", control.error().message}});
      if (!first_error) first_error = control.error();
    }
  }
  if (first_error && first_error->code != ErrorCode::kDeviceError) {
    AnswerError(r.res, *first_error);  // a ceiling below a GPU's lowest clock: the same for all of them
    return;
  }
  Answer(r.res, first_error ? 500 : 200, json{{"gpus", answers}});
}

void DeleteCeilings(const V1Request& r) {
  json answers = json::array();
  bool failed = false;
  for (const GpuDescription& d : r.node().gpus()) {
    auto control = r.node().ClearCeiling(d.index);
    failed = failed || !control.ok();
    answers.push_back(control.ok() ? ControlJson(r.node(), *control)
                                   : json{{"gpu", d.index}, {"error", control.error().message}});
  }
  Answer(r.res, failed ? 500 : 200, json{{"gpus", answers}});
}

// Every /v1 route: its method, path, who may ask it, whether it reads a body, and its handler.
const std::vector<V1Route>& V1Routes() {
  const std::string gpu = R"(/v1/gpus/([^/]+)/)";
  const std::string sm = gpu + std::string(ClockKindResource(ClockKind::kSm));
  const std::string memory = gpu + std::string(ClockKindResource(ClockKind::kMemory));
  static const std::vector<V1Route> kRoutes = {
      {Method::kGet, "/healthz", Access::kAnyone, false, GetHealth},
      {Method::kGet, "/openapi.yaml", Access::kAnyone, false, GetOpenApi},
      {Method::kGet, "/v1/agent", Access::kRead, false, GetAgent},
      {Method::kGet, "/v1/gpus", Access::kRead, false, GetGpus},
      {Method::kGet, "/v1/readings", Access::kRead, false, GetReadings},
      {Method::kGet, "/v1/readings/server", Access::kRead, false, GetServerReading},
      {Method::kGet, "/v1/readings/stream", Access::kRead, false, GetReadingsStream},
      {Method::kGet, "/metrics", Access::kRead, false, GetMetrics},
      {Method::kGet, "/v1/state", Access::kRead, false, GetState},
      {Method::kPost, "/v1/leases", Access::kTrain, true, PostLease},
      {Method::kPost, R"(/v1/leases/([^/]+)/renew)", Access::kTrain, false, PostLeaseRenewal},
      {Method::kDelete, R"(/v1/leases/([^/]+))", Access::kTrain, false, DeleteLease},
      {Method::kGet, "/v1/jobs", Access::kRead, false, GetJobs},
      {Method::kGet, R"(/v1/jobs/([^/]+))", Access::kRead, false, GetJob},
      {Method::kPut, R"(/v1/jobs/([^/]+))", Access::kAdmin, true, PutJob},
      {Method::kDelete, R"(/v1/jobs/([^/]+))", Access::kAdmin, false, DeleteJob},
      {Method::kPut, sm, Access::kTrain, true, PutClocks<ClockKind::kSm>},
      {Method::kDelete, sm, Access::kTrain, true, DeleteClocks<ClockKind::kSm>},
      {Method::kPut, memory, Access::kTrain, true, PutClocks<ClockKind::kMemory>},
      {Method::kDelete, memory, Access::kTrain, true, DeleteClocks<ClockKind::kMemory>},
      {Method::kPut, gpu + "power-limit", Access::kTrain, true, PutPowerLimit},
      {Method::kDelete, gpu + "power-limit", Access::kTrain, true, DeletePowerLimit},
      {Method::kPut, gpu + "ceiling", Access::kRow, true, PutCeiling},
      {Method::kDelete, gpu + "ceiling", Access::kRow, true, DeleteCeiling},
      {Method::kPut, "/v1/ceilings", Access::kRow, true, PutCeilings},
      {Method::kDelete, "/v1/ceilings", Access::kRow, false, DeleteCeilings},
  };
  return kRoutes;
}

}  // namespace

void AddAgentRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    OpenStreams open_streams) {
  const AgentRouteContext* ctx = &context;
  for (const V1Route& route : V1Routes()) {
    const V1Route* r = &route;
    auto without_body = [r, transport, ctx, open_streams](const httplib::Request& req, httplib::Response& res) {
      Serve(*r, transport, *ctx, open_streams, req, res, nullptr);
    };
    auto with_body = [r, transport, ctx, open_streams](const httplib::Request& req, httplib::Response& res,
                                                       const httplib::ContentReader& reader) {
      Serve(*r, transport, *ctx, open_streams, req, res, &reader);
    };
    switch (route.method) {
      case Method::kGet:
        server.Get(route.pattern, without_body);
        break;
      case Method::kDelete:
        server.Delete(route.pattern, without_body);
        break;
      case Method::kPut:
        server.Put(route.pattern, with_body);
        break;
      case Method::kPost:
        if (route.reads_body) {
          server.Post(route.pattern, with_body);
        } else {
          server.Post(route.pattern, without_body);
        }
        break;
    }
  }
}

}  // namespace wattcut::agent
