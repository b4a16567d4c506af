#include "wattcut/server/server.h"

#include <httplib.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "wattcut/base/mutex.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/http/bind_problem.h"
#include "wattcut/http/error_body.h"
#include "wattcut/http/http_status.h"
#include "wattcut/http/loopback.h"
#include "wattcut/server/auth.h"
#include "wattcut/server/data_dir_lock.h"
#include "wattcut/server/measured_gpu_energy.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

namespace {

using Clock = std::chrono::steady_clock;

// One request is handled start to finish on one thread, so the route label and the
// start time travel from the start of the request to the logger in thread-locals.
thread_local Clock::time_point t_request_start;
thread_local const char* t_endpoint = "unmatched";

constexpr const char* kJson = "application/json";

// Bodies at least this large leave enough freed memory behind in the handling thread's
// malloc arena to be worth giving back to the system (malloc_trim) once handled.
constexpr size_t kTrimAfterBodyBytes = size_t{1} << 20;

// A status and a JSON body, for the answers this layer makes itself (/healthz).
struct Reply {
  int status = 200;
  std::string body;
};

void SetReply(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, kJson);
}

// An HTTP-level refusal (401, 403, 405, 408, 500): {"error": message}.
void SetError(httplib::Response& res, int status, const std::string& message) {
  SetReply(res, Reply{status, http::ErrorBody(message)});
}

// The registry's answer: `ok_status` with its JSON, or the status of its error's code.
void SetAnswer(httplib::Response& res, const Answer& answer, int ok_status = 200) {
  if (answer) return SetReply(res, Reply{ok_status, *answer});
  SetError(res, http::HttpStatusFor(answer.error().code), answer.error().message);
}

// The methods any route answers (HEAD through the GET routes). Anything else is refused
// before a body could be read (httplib would read a PRI or CONNECT body without a limit).
bool IsServedMethod(const std::string& method) {
  for (const char* m : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    if (method == m) return true;
  }
  return false;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<DataDirLock> data_dir_lock;
  std::unique_ptr<JobStore> store;
  Metrics metrics;
  std::unique_ptr<JobRegistry> registry;
  std::unique_ptr<AccessPolicy> policy;
  std::unique_ptr<http::BoundedHttpServer> http;
  int listen_fd = -1;
  int port = 0;
  bool loopback_only = false;
  std::string run_error;
  // Stop() may come before Run() has started listening (httplib's stop() is a no-op then).
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> run_started{false};
  std::atomic<bool> run_finished{false};
  // For the status page's uptime.
  Clock::time_point created_at = Clock::now();
  // /healthz writes to the store at most once a second and reuses the answer in between.
  Mutex health_mu;
  std::optional<Clock::time_point> health_checked_at GUARDED_BY(health_mu);
  Status health GUARDED_BY(health_mu) = Status::Ok();

  // A route's work: the request, its body (read and size-checked; empty for GET) and the
  // response.
  using Handler = std::function<void(const httplib::Request&, const std::string&, httplib::Response&)>;

  // Registers a route; `changes_frequencies` routes are refused (403) when the policy
  // says so. Authentication is checked before routing (PreRoute).
  void Route(const char* method, const char* pattern, const char* label, bool changes_frequencies, Handler handler) {
    std::string m = method;
    if (m == "GET") {
      http->Get(pattern,
                [this, label, changes_frequencies, handler](const httplib::Request& req, httplib::Response& res) {
                  t_endpoint = label;
                  if (Refused(req, res, changes_frequencies)) return;
                  handler(req, std::string(), res);
                });
      return;
    }
    auto with_body = [this, label, changes_frequencies, handler](const httplib::Request& req, httplib::Response& res,
                                                                 const httplib::ContentReader& reader) {
      t_endpoint = label;
      if (Refused(req, res, changes_frequencies)) return;
      std::string body;
      auto read = http::BoundedHttpServer::ReadBody(req, reader, options.max_body_bytes, body);
      if (read.status != 0) return SetError(res, read.status, read.error);
      const bool large = body.size() >= kTrimAfterBodyBytes;
      handler(req, body, res);
      if (large) {
        // The body, its JSON tree and the parsed profile were freed on this thread; return
        // the pages to the system instead of keeping them in this thread's arena.
        std::string().swap(body);
        malloc_trim(0);
      }
    };
    if (m == "POST") {
      http->Post(pattern, with_body);
    } else if (m == "PUT") {
      http->Put(pattern, with_body);
    } else {
      http->Delete(pattern, with_body);
    }
  }

  // True (and the response set) when a frequency-changing route is refused; the body is
  // then left unread, so the connection closes after the response.
  bool Refused(const httplib::Request& req, httplib::Response& res, bool changes_frequencies) {
    if (!changes_frequencies) return false;
    auto reason = policy->CheckFrequencyChange();
    if (!reason) return false;
    if (http::BoundedHttpServer::HasBody(req)) http::BoundedHttpServer::CloseAfterResponse();
    SetError(res, 403, *reason);
    return true;
  }

  // Before routing, before any body is read: methods no route serves and requests without
  // the token are answered here, so a stranger never makes the server read a body.
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req, httplib::Response& res) {
    t_endpoint = "unmatched";
    const bool has_body = http::BoundedHttpServer::HasBody(req);
    if (auto reason = policy->CheckAuthorization(req.get_header_value("Authorization"))) {
      t_endpoint = "unauthorized";
      if (has_body) http::BoundedHttpServer::CloseAfterResponse();
      res.set_header("WWW-Authenticate", "Bearer");
      SetError(res, 401, *reason);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!IsServedMethod(req.method)) {
      if (has_body) http::BoundedHttpServer::CloseAfterResponse();
      res.set_header("Allow", "GET, HEAD, POST, PUT, DELETE");
      SetError(res, 405, "method not allowed: " + PrintableText(req.method, 16));
      return httplib::Server::HandlerResponse::Handled;
    }
    // GET and HEAD routes never read a body: drop the connection after the response rather
    // than parse the body as the next request.
    if (has_body && (req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS")) {
      http::BoundedHttpServer::CloseAfterResponse();
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  // Parses the body with `parse`, and on success answers with `then` (`ok_status` when it
  // succeeds); a body that is not JSON is a 400, one with a wrong field a 422.
  template <typename T>
  static void WithBody(const std::string& body, httplib::Response& res, Result<T> (*parse)(const nlohmann::json&),
                       const std::function<Answer(const T&)>& then, int ok_status = 200) {
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

  static Result<int64_t> QueryInteger(const httplib::Request& req, const char* name, std::optional<int64_t> fallback) {
    if (!req.has_param(name)) {
      if (fallback) return *fallback;
      return Error{std::string("query parameter '") + name + "' is required"};
    }
    auto value = ParseNonNegativeInteger(name, req.get_param_value(name));
    if (!value) return Error{"query parameter " + value.error().message};
    return value;
  }

  // GET /healthz: 200 while the store can commit a write, 503 with the reason otherwise.
  Reply Health() {
    Status writable = Status::Ok();
    {
      MutexLock guard(health_mu);
      auto now = Clock::now();
      if (!health_checked_at || now - *health_checked_at >= std::chrono::seconds(1)) {
        health = store->CheckWritable();
        health_checked_at = now;
      }
      writable = health;
    }
    nlohmann::json out = {{"status", writable.ok() ? "ok" : "unavailable"}};
    if (!writable.ok()) {
      out["error"] = "the store cannot write (" + writable.error().message +
                     "): writes are refused until it can; check the disk of --data-dir";
    }
    size_t quarantined = registry->quarantined_jobs().size();
    if (quarantined > 0) out["quarantined_jobs"] = quarantined;
    return Reply{writable.ok() ? 200 : 503, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  }

  void AddRoutes();
};

void Server::Impl::AddRoutes() {
  JobRegistry& reg = *registry;

  // ---- Zeus pipeline frequency optimizer API -------------------------------------
  Route("POST", "/register_job", "register_job", false, [&reg](const auto&, const std::string& body, auto& res) {
    WithBody<JobRegistration>(body, res, &JobRegistrationFromJson,
                              [&reg](const JobRegistration& r) { return reg.RegisterJob(r); });
  });
  Route("POST", R"(/register_rank/([^/]+))", "register_rank", false,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<RankInfo>(body, res, &RankInfoFromJson,
                             [&](const RankInfo& info) { return reg.RegisterRank(job_id, info); });
        });
  Route("GET", R"(/schedule/([^/]+))", "schedule", false, [&reg](const auto& req, const std::string&, auto& res) {
    auto rank = QueryInteger(req, "rank", std::nullopt);
    if (!rank) return SetAnswer(res, rank.error());
    SetAnswer(res, reg.FetchSchedule(req.matches[1], *rank));
  });
  Route("POST", R"(/result/([^/]+))", "result", true, [&reg](const auto& req, const std::string& body, auto& res) {
    std::string job_id = req.matches[1];
    WithBody<ProfilingResult>(body, res, &ProfilingResultFromJson,
                              [&](const ProfilingResult& r) { return reg.PostResult(job_id, r); });
  });

  // ---- the status page (status_page.h) -------------------------------------------
  Route("GET", "/", "status_page", false, [this, &reg](const auto&, const std::string&, auto& res) {
    ServerStatusView view;
    view.version = WATTCUT_VERSION;
    view.uptime_s = std::chrono::duration<double>(Clock::now() - created_at).count();
    reg.FillStatusView(view, kStatusPageMaxJobs);
    res.set_content(StatusPageHtml(view), "text/html; charset=utf-8");
  });

  // ---- wattcut API, version 1 ------------------------------------------------------
  Route("GET", "/healthz", "healthz", false,
        [this](const auto&, const std::string&, auto& res) { SetReply(res, Health()); });
  Route("GET", "/metrics", "metrics", false, [this, &reg](const auto&, const std::string&, auto& res) {
    metrics.SetJobStates(reg.CountJobStates());
    metrics.SetPowerTargets(reg.PowerTargetGauges());
    metrics.SetMeasuredGpuEnergies(reg.MeasuredGpuEnergyGauges());
    res.set_content(metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  Route("GET", "/openapi.yaml", "openapi", false,
        [](const auto&, const std::string&, auto& res) { res.set_content(OpenApiYaml(), "application/yaml"); });
  Route("GET", "/v1/jobs", "v1_jobs", false,
        [&reg](const auto&, const std::string&, auto& res) { SetAnswer(res, reg.ListJobs()); });
  Route("GET", R"(/v1/jobs/([^/]+))", "v1_job", false,
        [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.GetJob(req.matches[1])); });
  Route("DELETE", R"(/v1/jobs/([^/]+))", "v1_job", true,
        [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.DeleteJob(req.matches[1])); });
  Route("PUT", R"(/v1/jobs/([^/]+)/planner)", "v1_planner", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<PlannerPatch>(body, res, &PlannerPatchFromJson,
                                 [&](const PlannerPatch& p) { return reg.SetPlanner(job_id, p); });
        });
  Route("PUT", R"(/v1/jobs/([^/]+)/profile)", "v1_profile", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<ProfileUpload>(
              body, res, &ProfileUploadFromJson, [&](const ProfileUpload& u) { return reg.UploadProfile(job_id, u); },
              202);
        });
  Route("POST", R"(/v1/jobs/([^/]+)/rank_profiles)", "v1_rank_profiles", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<RankProfile>(body, res, &RankProfileFromJson,
                                [&](const RankProfile& p) { return reg.UploadRankProfile(job_id, p); });
        });
  Route("GET", R"(/v1/jobs/([^/]+)/frontier)", "v1_frontier", false,
        [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.FrontierStatus(req.matches[1])); });
  Route("POST", R"(/v1/jobs/([^/]+)/frontier)", "v1_frontier", true,
        [&reg](const auto& req, const std::string&, auto& res) {
          SetAnswer(res, reg.ComputeFrontierNow(req.matches[1]), 202);
        });
  Route("GET", R"(/v1/jobs/([^/]+)/frontier/points)", "v1_frontier_points", false,
        [&reg](const auto& req, const std::string&, auto& res) {
          auto offset = QueryInteger(req, "offset", 0);
          if (!offset) return SetAnswer(res, offset.error());
          auto limit = QueryInteger(req, "limit", 1000);
          if (!limit) return SetAnswer(res, limit.error());
          SetAnswer(res, reg.FrontierPoints(req.matches[1], *offset, *limit));
        });
  Route("PUT", R"(/v1/jobs/([^/]+)/plan)", "v1_plan", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<PlanSelection>(body, res, &PlanSelectionFromJson,
                                  [&](const PlanSelection& s) { return reg.SelectPlan(job_id, s); });
        });
  Route("PUT", R"(/v1/jobs/([^/]+)/power_target)", "v1_power_target", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<PowerTarget>(body, res, &PowerTargetFromJson,
                                [&](const PowerTarget& t) { return reg.SetPowerTarget(job_id, t); });
        });
  Route(
      "DELETE", R"(/v1/jobs/([^/]+)/power_target)", "v1_power_target", true,
      [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.ClearPowerTarget(req.matches[1])); });
  Route("GET", R"(/v1/jobs/([^/]+)/power_target)", "v1_power_target", false,
        [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.GetPowerTarget(req.matches[1])); });
  Route("PUT", R"(/v1/jobs/([^/]+)/deadline_schedule)", "v1_deadline_schedule", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<DeadlineScheduleSpec>(
              body, res, &DeadlineScheduleSpec::FromRequestJson,
              [&](const DeadlineScheduleSpec& spec) { return reg.SetDeadlineSchedule(job_id, spec); });
        });
  Route("DELETE", R"(/v1/jobs/([^/]+)/deadline_schedule)", "v1_deadline_schedule", true,
        [&reg](const auto& req, const std::string&, auto& res) {
          SetAnswer(res, reg.ClearDeadlineSchedule(req.matches[1]));
        });
  Route("GET", R"(/v1/jobs/([^/]+)/deadline_schedule)", "v1_deadline_schedule", false,
        [&reg](const auto& req, const std::string&, auto& res) {
          SetAnswer(res, reg.GetDeadlineSchedule(req.matches[1]));
        });
  // A node's measurement writes the job's stored state: refused where every job-writing route is.
  Route("PUT", R"(/v1/jobs/([^/]+)/measured-energy/([^/]+))", "v1_measured_energy", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          std::string node = req.matches[2];
          WithBody<NodeGpuEnergy>(body, res, &NodeGpuEnergy::FromJson, [&](const NodeGpuEnergy& report) {
            return reg.ReportMeasuredGpuEnergy(job_id, node, report);
          });
        });
  Route("GET", R"(/v1/jobs/([^/]+)/measured-energy)", "v1_measured_energy", false,
        [&reg](const auto& req, const std::string&, auto& res) {
          auto offset = QueryInteger(req, "offset", 0);
          if (!offset) return SetAnswer(res, offset.error());
          auto limit = QueryInteger(req, "limit", kMaxMeasuredNodesPerPage);
          if (!limit) return SetAnswer(res, limit.error());
          SetAnswer(res, reg.MeasuredGpuEnergyNodes(req.matches[1], *offset, *limit));
        });
  Route("GET", R"(/v1/jobs/([^/]+)/stragglers)", "v1_stragglers", false,
        [&reg](const auto& req, const std::string&, auto& res) { SetAnswer(res, reg.ListStragglers(req.matches[1])); });
  Route("POST", R"(/v1/jobs/([^/]+)/stragglers)", "v1_stragglers", true,
        [&reg](const auto& req, const std::string& body, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<StragglerReport>(body, res, &StragglerReportFromJson,
                                    [&](const StragglerReport& s) { return reg.ReportStraggler(job_id, s); });
        });
  Route("GET", R"(/v1/jobs/([^/]+)/schedule)", "v1_schedule", false,
        [&reg](const auto& req, const std::string&, auto& res) {
          auto rank = QueryInteger(req, "rank", std::nullopt);
          if (!rank) return SetAnswer(res, rank.error());
          SetAnswer(res, reg.PreviewSchedule(req.matches[1], *rank));
        });

  Route("GET", R"(/v1/jobs/([^/]+)/deployment)", "v1_deployment", false,
        [&reg](const auto& req, const std::string&, auto& res) {
          auto rank = QueryInteger(req, "rank", std::nullopt);
          if (!rank) return SetAnswer(res, rank.error());
          auto step = QueryInteger(req, "step", 0);
          if (!step) return SetAnswer(res, step.error());
          auto version = QueryInteger(req, "version", 0);
          if (!version) return SetAnswer(res, version.error());
          SetAnswer(res, reg.FetchDeployment(req.matches[1], *rank, *step, static_cast<uint64_t>(*version)));
        });

  // Any other POST, PUT, PATCH or DELETE: a 404 without reading the body (httplib's own
  // reader would read a chunked body without any limit).
  auto unknown = [](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader&) {
    if (http::BoundedHttpServer::HasBody(req)) http::BoundedHttpServer::CloseAfterResponse();
    res.status = 404;
  };
  http->Post(".*", unknown);
  http->Put(".*", unknown);
  http->Patch(".*", unknown);
  http->Delete(".*", unknown);
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_) {
    impl_->registry->Shutdown();
    impl_->http->stop();
  }
}

int Server::port() const { return impl_->port; }

bool Server::loopback_only() const { return impl_->loopback_only; }

std::vector<QuarantinedJob> Server::quarantined_jobs() const { return impl_->registry->quarantined_jobs(); }

const std::string& Server::run_error() const { return impl_->run_error; }

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.data_dir.empty()) return Error{"--data-dir is required"};
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Error{"cannot create data dir " + options.data_dir + ": " + ec.message()};
  auto lock = DataDirLock::Acquire(options.data_dir);
  if (!lock) return lock.error();
  impl->data_dir_lock = std::move(*lock);

  std::optional<std::string> token;
  if (options.token_file) {
    auto t = ReadTokenFile(*options.token_file);
    if (!t) return t.error();
    token = *t;
  }

  auto store = JobStore::Open(options.data_dir, options.sync);
  if (!store) return store.error();
  impl->store = std::move(*store);
  impl->registry = std::make_unique<JobRegistry>(*impl->store, impl->metrics, options.registry);
  if (auto s = impl->registry->Load(); !s) return s.error();

  Impl* self = impl.get();
  http::BoundedHttpServer::Observer observer;
  observer.on_request_begin = [] { t_request_start = Clock::now(); };
  observer.on_cut = [self](http::ConnectionCut cut) {
    self->metrics.RecordConnectionCut(cut == http::ConnectionCut::kClientLimit ? "client_limit" : "request_timeout");
  };
  impl->http = std::make_unique<http::BoundedHttpServer>(options.connections, std::move(observer));
  http::BoundedHttpServer& http = *impl->http;
  size_t threads = options.http_threads > 0 ? static_cast<size_t>(options.http_threads)
                                            : static_cast<size_t>(options.registry.max_long_polls) + 32;
  // The workers serve requests (a waiting long poll holds one: max_long_polls of them, and 32
  // for the rest); connections wait for their requests on the reactor. Started at the end of
  // Create(), so that a pool that cannot start is an error of Create().
  http.set_payload_max_length(options.max_body_bytes);
  http.set_keep_alive_max_count(1000);
  http.set_keep_alive_timeout(5);
  http.set_tcp_nodelay(true);
  http.set_socket_options([self](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // Accepted sockets inherit this: no Nagle delay between a response's header and
    // body writes (40 ms per request against a delayed-ACK client otherwise).
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    self->listen_fd = sock;
  });
  http.set_pre_routing_handler(
      [self](const httplib::Request& req, httplib::Response& res) { return self->PreRoute(req, res); });
  // Error answers without a body get theirs from BoundedHttpServer's error handler.
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SetError(res, 500, "internal error: " + what);
  });
  http.set_logger([self](const httplib::Request& req, const httplib::Response& res) {
    double seconds = std::chrono::duration<double>(Clock::now() - t_request_start).count();
    self->metrics.RecordRequest(t_endpoint, req.method, res.status, seconds);
    t_endpoint = "unmatched";
  });
  impl->AddRoutes();

  if (options.port == 0) {
    impl->port = http.bind_to_any_port(options.host);
    if (impl->port <= 0) {
      return Error{"cannot bind " + options.host + " to a free port: " + http::BindProblem(options.host, 0)};
    }
  } else {
    if (!http.bind_to_port(options.host, options.port)) {
      const std::string problem = http::BindProblem(options.host, options.port);
      return Error{
          "cannot bind " + options.host + ":" + std::to_string(options.port) + ": " +
          (problem.empty() ? "it binds now; try again" : problem) +
          (problem == "Address already in use"
               ? " (another wattcut serve, or another program, listens there: --listen HOST:PORT picks another)"
               : "")};
    }
    impl->port = options.port;
  }
  // cpp-httplib listens with a backlog of 5; a thousand ranks connecting at once need
  // more. listen() again on a listening socket only changes its backlog.
  if (impl->listen_fd >= 0) ::listen(impl->listen_fd, 4096);
  // Loopback only if the name says so and the address it was bound to agrees.
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  impl->loopback_only = http::IsLoopbackHost(options.host) && impl->listen_fd >= 0 &&
                        ::getsockname(impl->listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_length) == 0 &&
                        http::IsLoopbackAddress(bound);
  impl->policy = std::make_unique<AccessPolicy>(token, impl->loopback_only);
  if (auto s = impl->http->StartWorkers(threads); !s) return s.error();
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

bool Server::Run() {
  impl_->run_started = true;
  if (impl_->stop_requested) {
    impl_->run_finished = true;
    return true;
  }
  bool ok = false;
  try {
    ok = impl_->http->listen_after_bind();
  } catch (const std::exception& e) {
    impl_->run_error = std::string("the HTTP listener failed: ") + e.what();
  }
  impl_->run_finished = true;
  return ok;
}

void Server::Stop() {
  impl_->stop_requested = true;
  impl_->registry->Shutdown();
  // Run() began but may not be listening yet: wait until httplib runs, so that stop() lands.
  // (Run() saw stop_requested unset, so it does reach the listen loop, or has already left it.)
  if (impl_->run_started) {
    while (!impl_->http->is_running() && !impl_->run_finished) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  impl_->http->stop();
}

}  // namespace wattcut::server
