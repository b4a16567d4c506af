#include "wattcut/agent/agent_routes.h"

#include <atomic>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "wattcut/agent/agent_metrics.h"
#include "wattcut/agent/agent_requests.h"
#include "wattcut/agent/server_power.h"
#include "wattcut/base/error_code.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/gpu/clock_kind.h"
#include "wattcut/http/bearer_token.h"
#include "wattcut/http/http_status.h"

namespace wattcut::agent {

using nlohmann::json;

namespace {

constexpr size_t kMaxBodyBytes = 64 * 1024;
// Over TCP a lease lives on its connection, which the agent closes after kKeepAliveS idle.
constexpr int kMaxTcpLeaseTtlS = 30;

std::string Dump(const json& doc) { return doc.dump(-1, ' ', false, json::error_handler_t::replace); }

void Answer(httplib::Response& res, int status, const json& doc) {
  res.status = status;
  res.set_content(Dump(doc) + "\n", "application/json");
}

void AnswerError(httplib::Response& res, int status, const std::string& code, const std::string& message) {
  Answer(res, status, json{{"error", message}, {"code", code}});
}

void AnswerError(httplib::Response& res, const Error& error) {
  AnswerError(res, http::HttpStatusFor(error.code), std::string(ErrorCodeName(error.code)), error.message);
}

json RangeJson(const std::optional<ClockRange>& range) {
  if (!range) return nullptr;
  return json{{"min_mhz", range->min_mhz}, {"max_mhz", range->max_mhz}};
}

json HolderJson(const LeaseHolder& holder) {
  if (holder.kind == LeaseHolder::Kind::kProcess) {
    json doc = {{"pid", holder.pid}, {"uid", holder.uid}};
    if (!holder.job_id.empty()) doc["job"] = holder.job_id;
    return doc;
  }
  return json{{"token_line", holder.token_line}, {"connection", holder.connection_id}};
}

json LeaseJson(const Lease& lease) {
  // A zeusd client's implicit lease has no time to live: it lasts while its connection does. Its
  // stand-in ttl (10^12 s) is not a number a reader should see.
  const bool implicit = lease.ttl_s >= NodeAgent::kImplicitLeaseTtlS;
  return json{{"id", lease.id},
              {"gpus", lease.gpus},
              {"ttl_s", implicit ? json(nullptr) : json(lease.ttl_s)},
              {"implicit", implicit},
              {"holder", HolderJson(lease.holder)}};
}

json ControlJson(const NodeAgent& node, const GpuControl& control) {
  json ceiling = nullptr;
  if (control.ceiling) {
    ceiling = {{"mhz", control.ceiling->mhz},
               {"reason", control.ceiling->reason},
               {"expires_in_s", node.CeilingSecondsLeft(*control.ceiling)}};
  }
  json doc = {{"gpu", control.index},
              {"lease", control.lease ? LeaseJson(*control.lease) : json(nullptr)},
              {"lock", RangeJson(control.sm_lock)},
              {"ceiling", ceiling},
              {"applied", control.sm_applied_known ? RangeJson(control.sm_applied) : json("unknown")},
              {"memory_clocks", RangeJson(control.memory_lock)},
              {"power_limit_w",
               control.power_limit_mw ? json(static_cast<double>(*control.power_limit_mw) / 1000.0) : json(nullptr)}};
  return doc;
}

// A registered job; its credential only for the admin that registered it.
json JobJson(const NodeJob& job, bool with_credential) {
  json doc = {{"job", job.id},
              {"uid", job.uid},
              {"gpus", job.gpus},
              {"started_at_unix_s", job.started_at_unix_s},
              {"used_gpus", job.touched}};
  if (with_credential) doc["credential"] = job.credential;
  return doc;
}

json JobEnergyJson(const JobEnergy& energy) {
  json per_gpu = json::array();
  for (const auto& [gpu, joules] : energy.gpu_energy_j) {
    per_gpu.push_back({{"gpu", gpu}, {"energy_j", joules ? json(*joules) : json(nullptr)}});
  }
  return json{{"job", energy.job.id},
              {"uid", energy.job.uid},
              {"gpus", energy.job.gpus},
              {"duration_s", energy.duration_s},
              {"gpu_energy_j", energy.total_gpu_energy_j ? json(*energy.total_gpu_energy_j) : json(nullptr)},
              {"per_gpu", per_gpu},
              {"problems", energy.problems}};
}

json JobEndJson(const JobEnd& end) {
  json doc = JobEnergyJson(end);
  doc["leases_ended"] = end.leases_ended;
  doc["reset_gpus"] = end.reset_gpus;
  return doc;
}

json GpuJson(const GpuDescription& d) {
  json limits = nullptr;
  if (d.power_limits) {
    limits = {{"min", d.power_limits->min_mw / 1000.0},
              {"max", d.power_limits->max_mw / 1000.0},
              {"default", d.power_limits->default_mw / 1000.0}};
  }
  return json{{"index", d.index},
              {"uuid", d.uuid},
              {"name", d.name},
              {"sm_clocks_mhz", d.sm_clocks_mhz},
              {"memory_clocks_mhz", d.memory_clocks_mhz},
              {"power_limit_w", limits},
              {"energy_counter", d.energy_counter}};
}

double GpuPowerW(const std::vector<GpuReading>& readings) {
  double total = 0;
  for (const GpuReading& r : readings) total += r.power_w.value_or(0);
  return total;
}

// The GPUs' power from NVML's instant field when every GPU has it (so that a controller reading
// every 10 ms does not read a 1 s average); nullopt when one lacks it.
std::optional<double> GpuInstantPowerW(const std::vector<GpuReading>& readings) {
  double total = 0;
  for (const GpuReading& r : readings) {
    if (!r.power_instant_w) return std::nullopt;
    total += *r.power_instant_w;
  }
  return total;
}

// The CPU packages' energy, or why there is none (null: no RAPL; an error: a failed read).
json CpusJson(const AgentRouteContext& context) {
  if (context.cpu == nullptr) return nullptr;
  auto read = context.cpu->Read();
  if (!read.ok()) return json{{"error", read.error().message}};
  json cpus = json::array();
  for (const cpu::CpuEnergyReading& r : *read) {
    cpus.push_back({{"index", r.index},
                    {"package_energy_uj", r.package_energy_uj},
                    {"dram_energy_uj", r.dram_energy_uj ? json(*r.dram_energy_uj) : json(nullptr)}});
  }
  return cpus;
}

// What GET /metrics shows: the readings and the controls of every GPU, and the server's power.
AgentMetricsSnapshot MetricsSnapshot(const AgentRouteContext& context) {
  AgentMetricsSnapshot snapshot;
  snapshot.hostname = context.hostname;
  const std::vector<GpuReading> readings = context.node->Read();
  const std::vector<GpuControl> controls = context.node->Controls();
  for (const GpuDescription& d : context.node->gpus()) {
    const GpuReading& r = readings[static_cast<size_t>(d.index)];
    const GpuControl& c = controls[static_cast<size_t>(d.index)];
    GpuTelemetry t;
    t.index = d.index;
    t.uuid = d.uuid;
    t.name = d.name;
    t.sm_clock_mhz = r.sm_clock_mhz;
    t.power_w = r.power_w;
    t.power_instant_w = r.power_instant_w;
    t.energy_mj = r.energy_mj;
    t.leased = c.lease.has_value();
    if (c.ceiling) t.ceiling_mhz = c.ceiling->mhz;
    if (c.sm_applied_known && c.sm_applied) t.applied_max_sm_mhz = c.sm_applied->max_mhz;
    snapshot.gpus.push_back(std::move(t));
  }
  if (context.power != nullptr) {
    snapshot.server = context.power->Read(GpuPowerW(readings));
    snapshot.stale_redfish_readings = context.power->stale_redfish_readings();
  }
  if (context.cpu != nullptr) {
    if (auto read = context.cpu->Read(); read.ok()) {  // a failed read leaves the families out this scrape
      for (size_t k = 0; k < read->size(); ++k) {
        const cpu::RaplPackage& p = context.cpu->packages()[k];
        const cpu::CpuEnergyReading& r = (*read)[k];
        CpuTelemetry c{r.index, p.package.path, r.package_energy_uj, r.dram_energy_uj, std::nullopt};
        if (p.dram) c.dram_path = p.dram->path;
        snapshot.cpus.push_back(std::move(c));
      }
    }
  }
  return snapshot;
}

json ReadingsJson(const AgentRouteContext& context) {
  const std::vector<GpuReading> readings = context.node->Read();
  json gpus = json::array();
  for (const GpuReading& r : readings) {
    json errors = json::object();
    for (const auto& [field, message] : r.errors) errors[field] = message;
    gpus.push_back({{"index", r.index},
                    {"power_w", r.power_w ? json(*r.power_w) : json(nullptr)},
                    {"power_instant_w", r.power_instant_w ? json(*r.power_instant_w) : json(nullptr)},
                    {"power_average_w", r.power_average_w ? json(*r.power_average_w) : json(nullptr)},
                    {"energy_mj", r.energy_mj ? json(*r.energy_mj) : json(nullptr)},
                    {"sm_clock_mhz", r.sm_clock_mhz ? json(*r.sm_clock_mhz) : json(nullptr)},
                    {"power_limit_w", r.power_limit_w ? json(*r.power_limit_w) : json(nullptr)},
                    {"errors", errors}});
  }
  const double now_s = UnixNowS();
  json doc = {{"time_s", now_s}, {"gpus", gpus}};
  doc["server"] = context.power != nullptr ? ToJson(context.power->Read(GpuPowerW(readings))) : json(nullptr);
  doc["cpus"] = CpusJson(context);
  return doc;
}

// GET /v1/readings/server: the server's power alone, for the row controller (it reads every
// server every period: an 8-GPU answer of /v1/readings is about 1.5 KB, this one about 150 bytes).
// `instant`: the GPUs' part from NVML's instant field where every GPU has it (gpu_power says which
// was used: "instant" or "power_usage").
json ServerReadingJson(const AgentRouteContext& context, bool instant) {
  const std::vector<GpuReading> readings = context.node->Read();
  const double now_s = UnixNowS();
  const std::optional<double> instant_w = instant ? GpuInstantPowerW(readings) : std::nullopt;
  json doc = {{"time_s", now_s}, {"gpu_count", readings.size()}, {"gpu_power", instant_w ? "instant" : "power_usage"}};
  doc["server"] =
      context.power != nullptr ? ToJson(context.power->Read(instant_w.value_or(GpuPowerW(readings)))) : json(nullptr);
  return doc;
}

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

template <typename T>
bool Unwrap(Result<T>& value, httplib::Response& res) {
  if (value.ok()) return true;
  AnswerError(res, value.error());
  return false;
}

}  // namespace

bool AgentCaller::Allows(AgentScope scope) const {
  switch (scope) {
    case AgentScope::kRead:
      return read;
    case AgentScope::kTrain:
      return train;
    case AgentScope::kRow:
      return row;
  }
  return false;
}

std::optional<Refusal> IdentifyCaller(AgentTransport transport, const http::ConnectionInfo& connection,
                                      const std::string& authorization, const AgentTokens* tokens, NodeAgent* node,
                                      AgentCaller& caller) {
  std::optional<AgentTokens::Match> token;
  std::optional<JobTable::CredentialMatch> job;
  if (!authorization.empty()) {
    const std::optional<std::string_view> presented = http::BearerCredentials(authorization);
    if (tokens != nullptr && presented) token = tokens->Find(*presented);
    if (!token && presented && node != nullptr) job = node->JobOfCredential(*presented);
    if (job && job->ended) {
      return Refusal{401, "the credential of job " + job->job_id + " stopped working when the job ended"};
    }
    if (job && transport == AgentTransport::kTcp) {
      return Refusal{401, "a job's credential works only on the agent's Unix socket (it is bound to the job's uid)"};
    }
    if (!token && !job) return Refusal{401, "invalid bearer token"};
  }
  auto grant = [&caller](AgentScope scope) {
    caller.read = caller.read || ScopeAllows(scope, AgentScope::kRead);
    caller.train = caller.train || ScopeAllows(scope, AgentScope::kTrain);
    caller.row = caller.row || ScopeAllows(scope, AgentScope::kRow);
  };
  if (transport == AgentTransport::kUnixSocket) {
    caller.holder = LeaseHolder::Process(connection.pid, connection.uid);
    if (job) caller.holder.job_id = job->job_id;
    grant(AgentScope::kTrain);
    if (connection.uid == 0) grant(AgentScope::kRow);
    caller.admin = connection.uid == 0;
    if (token) grant(token->scope);
    return std::nullopt;
  }
  if (tokens == nullptr) {
    if (!connection.loopback) {
      return Refusal{403, "this agent has no --token-file: over TCP it answers only loopback read requests"};
    }
    caller.holder = LeaseHolder::Connection(0, connection.id, connection.peer_address);
    grant(AgentScope::kRead);
    return std::nullopt;
  }
  if (!token) return Refusal{401, "missing 'Authorization: Bearer <token>' header"};
  caller.holder = LeaseHolder::Connection(token->line, connection.id, connection.peer_address);
  grant(token->scope);
  return std::nullopt;
}

void AddAgentRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    OpenStreams open_streams) {
  const AgentRouteContext* ctx = &context;
  auto caller = [transport, ctx](const httplib::Request& req, httplib::Response& res, AgentScope needed) {
    return Caller(transport, *ctx, req, res, needed);
  };
  NodeAgent& node = *context.node;

  server.Get("/healthz", [ctx](const httplib::Request&, httplib::Response& res) {
    const auto& problems = ctx->node->startup_problems();
    Answer(res, 200, json{{"status", problems.empty() ? "ok" : "degraded"}, {"startup_problems", problems}});
  });

  server.Get("/openapi.yaml", [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content(AgentOpenApiYaml(), "application/yaml");
  });

  server.Get("/v1/agent", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    Answer(res, 200,
           json{{"api_version", 1},
                {"version", ctx->version},
                {"hostname", ctx->hostname},
                {"backend", ctx->node->backend_name()},
                {"gpu_count", ctx->node->gpus().size()},
                {"startup_problems", ctx->node->startup_problems()}});
  });

  server.Get("/v1/gpus", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    json gpus = json::array();
    for (const GpuDescription& d : ctx->node->gpus()) gpus.push_back(GpuJson(d));
    Answer(res, 200, json{{"gpus", gpus}});
  });

  server.Get("/v1/readings", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    Answer(res, 200, ReadingsJson(*ctx));
  });

  server.Get("/v1/readings/server", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    for (const auto& [name, value] : req.params) {
      if (name != "gpu_power" || (value != "instant" && value != "power_usage")) {
        AnswerError(res, 400, "invalid_argument",
                    "GET /v1/readings/server takes only gpu_power=instant|power_usage, got '" + name + "'");
        return;
      }
    }
    Answer(res, 200, ServerReadingJson(*ctx, req.get_param_value("gpu_power") == "instant"));
  });

  // A stream holds a worker for as long as it is read: at most kMaxReadingStreams at once on a
  // listener, so that streams never take the workers a setter, a renewal or a reading needs.
  server.Get("/v1/readings/stream", [ctx, caller, open_streams](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    auto query = ParseStreamQuery(req.params);
    if (!Unwrap(query, res)) return;
    if (open_streams->fetch_add(1) >= kMaxReadingStreams) {
      --*open_streams;
      AnswerError(res, 503, "unavailable",
                  std::to_string(kMaxReadingStreams) +
                      " readings streams are open on this listener: close one, or poll GET /v1/readings");
      return;
    }
    // Counted while the response (which holds the provider) lives.
    auto slot = std::shared_ptr<void>(nullptr, [open_streams](void*) { --*open_streams; });
    const StreamQuery q = *query;
    auto sent = std::make_shared<int64_t>(0);
    res.set_chunked_content_provider("application/x-ndjson", [ctx, q, sent, slot](size_t, httplib::DataSink& sink) {
      if (*sent > 0) {
        // Sleeps in slices so that a stopping agent, or a client gone, ends the stream within 100 ms.
        using std::chrono::steady_clock;
        const steady_clock::time_point until = steady_clock::now() + std::chrono::duration_cast<steady_clock::duration>(
                                                                         std::chrono::duration<double>(q.interval_s));
        while (steady_clock::now() < until) {
          if (ctx->stopping != nullptr && *ctx->stopping) {
            sink.done();
            return true;
          }
          if (http::BoundedHttpServer::PeerClosed()) return false;  // a client gone frees its slot now
          const steady_clock::duration left = until - steady_clock::now();
          std::this_thread::sleep_for(std::min<steady_clock::duration>(left, std::chrono::milliseconds(100)));
        }
      }
      const std::string line = Dump(ReadingsJson(*ctx)) + "\n";
      if (!sink.write(line.data(), line.size())) return false;
      ++*sent;
      if (q.count && *sent >= *q.count) sink.done();
      return true;
    });
  });

  server.Get("/metrics", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    static const AgentCounters kNoCounters;
    res.status = 200;
    res.set_content(RenderAgentMetrics(MetricsSnapshot(*ctx), ctx->counters != nullptr ? *ctx->counters : kNoCounters),
                    "text/plain; version=0.0.4; charset=utf-8");
  });

  server.Get("/v1/state", [ctx, caller](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    json gpus = json::array();
    for (const GpuControl& control : ctx->node->Controls()) gpus.push_back(ControlJson(*ctx->node, control));
    Answer(res, 200, json{{"gpus", gpus}});
  });

  // Leases.
  server.Post("/v1/leases", [transport, caller, &node](const httplib::Request& req, httplib::Response& res,
                                                       const httplib::ContentReader& reader) {
    auto who = caller(req, res, AgentScope::kTrain);
    if (!who) return;
    auto body = Body(req, res, reader);
    if (!body) return;
    auto request = ParseLeaseRequest(*body);
    if (!Unwrap(request, res)) return;
    if (transport == AgentTransport::kTcp && request->ttl_s > kMaxTcpLeaseTtlS) {
      AnswerError(res, Error::InvalidArgument("'ttl_s': over TCP a lease lives on its connection: at most " +
                                              std::to_string(kMaxTcpLeaseTtlS) +
                                              " s, renewed every ttl_s / 3 to keep the connection open"));
      return;
    }
    auto lease = node.TakeLease(who->holder, request->gpus, request->ttl_s);
    if (!Unwrap(lease, res)) return;
    Answer(res, 201, LeaseJson(*lease));
  });

  server.Post(R"(/v1/leases/([^/]+)/renew)", [caller, &node](const httplib::Request& req, httplib::Response& res) {
    auto who = caller(req, res, AgentScope::kTrain);
    if (!who) return;
    auto id = ParseLeaseIdSegment(req.matches[1].str());
    if (!Unwrap(id, res)) return;
    auto lease = node.RenewLease(*id, who->holder);
    if (!Unwrap(lease, res)) return;
    Answer(res, 200, LeaseJson(*lease));
  });

  server.Delete(R"(/v1/leases/([^/]+))", [caller, &node](const httplib::Request& req, httplib::Response& res) {
    auto who = caller(req, res, AgentScope::kTrain);
    if (!who) return;
    auto id = ParseLeaseIdSegment(req.matches[1].str());
    if (!Unwrap(id, res)) return;
    auto ended = node.ReleaseLease(*id, who->holder);
    if (!Unwrap(ended, res)) return;
    Answer(res, 200, json{{"released", ended->lease.gpus}});
  });

  // Batch jobs: registered and ended by root on the socket (the Slurm plugin), listed to readers
  // without their credentials.
  auto admin = [caller](const httplib::Request& req, httplib::Response& res) -> bool {
    auto who = caller(req, res, AgentScope::kRead);
    if (!who) return false;
    if (!who->admin) {
      if (http::BoundedHttpServer::HasBody(req)) http::BoundedHttpServer::CloseAfterResponse();
      AnswerError(res, 403, "permission_denied",
                  "registering and ending jobs is root's, on the agent's Unix socket (the Slurm plugin does it)");
      return false;
    }
    return true;
  };
  server.Get("/v1/jobs", [caller, &node](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    json jobs = json::array();
    for (const NodeJob& job : node.Jobs()) jobs.push_back(JobJson(job, /*with_credential=*/false));
    Answer(res, 200, json{{"jobs", jobs}});
  });
  server.Get(R"(/v1/jobs/([^/]+))", [caller, &node](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRead)) return;
    const std::optional<std::string> id = PathJobId(req, res);
    if (!id) return;
    auto energy = node.JobEnergySoFar(*id);
    if (!Unwrap(energy, res)) return;
    Answer(res, 200, JobEnergyJson(*energy));
  });
  server.Put(R"(/v1/jobs/([^/]+))",
             [admin, &node](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
               if (!admin(req, res)) return;
               auto body = Body(req, res, reader);
               if (!body) return;
               const std::optional<std::string> id = PathJobId(req, res);
               if (!id) return;
               auto request = ParseJobRequest(*body);
               if (!Unwrap(request, res)) return;
               auto registered = node.RegisterJob(*id, request->uid, request->gpus);
               if (!Unwrap(registered, res)) return;
               Answer(res, registered->created ? 201 : 200, JobJson(registered->job, /*with_credential=*/true));
             });
  server.Delete(R"(/v1/jobs/([^/]+))", [admin, &node](const httplib::Request& req, httplib::Response& res) {
    if (!admin(req, res)) return;
    const std::optional<std::string> id = PathJobId(req, res);
    if (!id) return;
    auto ended = node.EndJob(*id);
    if (!Unwrap(ended, res)) return;
    Answer(res, 200, JobEndJson(*ended));
  });

  // One GPU's controls: the training side's (train scope) and the row side's ceiling (row scope).
  using GpuAction = std::function<Result<GpuControl>(const AgentCaller&, int gpu, const std::string& body)>;
  auto gpu_route = [ctx, caller](AgentScope scope, GpuAction action) {
    return [ctx, caller, scope, action](const httplib::Request& req, httplib::Response& res,
                                        const httplib::ContentReader& reader) {
      auto who = caller(req, res, scope);
      if (!who) return;
      auto body = Body(req, res, reader);
      if (!body) return;
      auto gpu = ParseGpuIndexSegment(req.matches[1].str());
      if (!Unwrap(gpu, res)) return;
      auto control = action(*who, *gpu, *body);
      if (!Unwrap(control, res)) return;
      Answer(res, 200, ControlJson(*ctx->node, *control));
    };
  };
  auto without_body = [](auto route) {
    return [route](const httplib::Request& req, httplib::Response& res) {
      // A DELETE has no body to read: an empty reader.
      route(req, res,
            httplib::ContentReader([](httplib::ContentReceiver) { return true; },
                                   [](httplib::MultipartContentHeader, httplib::ContentReceiver) { return true; }));
    };
  };

  for (ClockKind kind : {ClockKind::kSm, ClockKind::kMemory}) {
    const std::string path = R"(/v1/gpus/([^/]+)/)" + std::string(ClockKindResource(kind));
    server.Put(path,
               gpu_route(AgentScope::kTrain, [&node, kind](const AgentCaller& who, int gpu, const std::string& body) {
                 auto range = ParseClockRangeRequest(body);
                 if (!range.ok()) return Result<GpuControl>(range.error());
                 return node.LockClocks(who.holder, gpu, kind, ClockRange{range->min_mhz, range->max_mhz});
               }));
    server.Delete(path, without_body(gpu_route(AgentScope::kTrain,
                                               [&node, kind](const AgentCaller& who, int gpu, const std::string&) {
                                                 return node.UnlockClocks(who.holder, gpu, kind);
                                               })));
  }
  server.Put(R"(/v1/gpus/([^/]+)/power-limit)",
             gpu_route(AgentScope::kTrain, [&node](const AgentCaller& who, int gpu, const std::string& body) {
               auto limit = ParsePowerLimitRequest(body);
               if (!limit.ok()) return Result<GpuControl>(limit.error());
               return node.SetPowerLimit(who.holder, gpu, limit->watts);
             }));
  server.Delete(
      R"(/v1/gpus/([^/]+)/power-limit)",
      without_body(gpu_route(AgentScope::kTrain, [&node](const AgentCaller& who, int gpu, const std::string&) {
        return node.ResetPowerLimit(who.holder, gpu);
      })));
  server.Put(R"(/v1/gpus/([^/]+)/ceiling)",
             gpu_route(AgentScope::kRow, [&node](const AgentCaller&, int gpu, const std::string& body) {
               auto ceiling = ParseCeilingRequest(body, CeilingScope::kOneGpu);
               if (!ceiling.ok()) return Result<GpuControl>(ceiling.error());
               return node.SetCeiling(gpu, ceiling->mhz, ceiling->lease_s, ceiling->reason);
             }));
  server.Delete(R"(/v1/gpus/([^/]+)/ceiling)",
                without_body(gpu_route(AgentScope::kRow, [&node](const AgentCaller&, int gpu, const std::string&) {
                  return node.ClearCeiling(gpu);
                })));

  // Every GPU's ceiling at once (the row controller's usual command). GPUs are checked first, so
  // a bad one changes nothing; an NVML error on one GPU leaves the others set and is reported.
  server.Put("/v1/ceilings", [ctx, caller, &node](const httplib::Request& req, httplib::Response& res,
                                                  const httplib::ContentReader& reader) {
    if (!caller(req, res, AgentScope::kRow)) return;
    auto body = Body(req, res, reader);
    if (!body) return;
    auto ceiling = ParseCeilingRequest(*body, CeilingScope::kAllGpus);
    if (!Unwrap(ceiling, res)) return;
    std::vector<int> gpus = ceiling->gpus.value_or(std::vector<int>{});
    if (!ceiling->gpus) {
      for (const GpuDescription& d : node.gpus()) gpus.push_back(d.index);
    }
    for (int gpu : gpus) {
      if (gpu >= static_cast<int>(node.gpus().size())) {
        AnswerError(res, Error::NotFound("GPU " + std::to_string(gpu) + " does not exist (" +
                                         std::to_string(node.gpus().size()) + " GPUs)"));
        return;
      }
    }
    json answers = json::array();
    std::optional<Error> first_error;
    for (int gpu : gpus) {
      auto control = node.SetCeiling(gpu, ceiling->mhz, ceiling->lease_s, ceiling->reason);
      if (control.ok()) {
        answers.push_back(ControlJson(*ctx->node, *control));
      } else {
        answers.push_back(json{{"gpu", gpu}, {"error", control.error().message}});
        if (!first_error) first_error = control.error();
      }
    }
    if (first_error && first_error->code != ErrorCode::kDeviceError) {
      AnswerError(res, *first_error);  // a ceiling below a GPU's lowest clock: the same for all of them
      return;
    }
    Answer(res, first_error ? 500 : 200, json{{"gpus", answers}});
  });
  server.Delete("/v1/ceilings", [ctx, caller, &node](const httplib::Request& req, httplib::Response& res) {
    if (!caller(req, res, AgentScope::kRow)) return;
    json answers = json::array();
    bool failed = false;
    for (const GpuDescription& d : node.gpus()) {
      auto control = node.ClearCeiling(d.index);
      failed = failed || !control.ok();
      answers.push_back(control.ok() ? ControlJson(*ctx->node, *control)
                                     : json{{"gpu", d.index}, {"error", control.error().message}});
    }
    Answer(res, failed ? 500 : 200, json{{"gpus", answers}});
  });
}

}  // namespace wattcut::agent
