#include "wattcut/server/server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "wattcut/server/auth.h"

namespace wattcut::server {

namespace {

using Clock = std::chrono::steady_clock;

// One request is handled start to finish on one thread, so the route label and the
// start time travel from the pre-routing hook to the logger in thread-locals.
thread_local Clock::time_point t_request_start;
thread_local const char* t_endpoint = "unmatched";

constexpr const char* kJson = "application/json";

void SetReply(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, kJson);
}

void SetError(httplib::Response& res, int status, const std::string& message) {
  SetReply(res, Reply{status, ErrorBody(message)});
}

const char* StatusText(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "no such endpoint";
    case 405:
      return "method not allowed";
    case 413:
      return "request body too large";
    case 414:
      return "request URI too long";
    default:
      return "request failed";
  }
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<JobStore> store;
  Metrics metrics;
  std::unique_ptr<JobRegistry> registry;
  std::unique_ptr<AccessPolicy> policy;
  httplib::Server http;
  int listen_fd = -1;
  int port = 0;
  // Stop() may come before Run() has started listening (httplib's stop() is a no-op then).
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> run_started{false};
  std::atomic<bool> run_finished{false};

  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Registers a route; `changes_frequencies` routes are refused (403) when the policy
  // says so.
  void Route(const char* method, const char* pattern, const char* label, bool changes_frequencies,
             Handler handler) {
    auto wrapped = [this, label, changes_frequencies, handler = std::move(handler)](
                       const httplib::Request& req, httplib::Response& res) {
      t_endpoint = label;
      // Checked here rather than before routing: by now the body has been read, so a
      // refused request leaves the keep-alive connection in a clean state.
      if (auto reason = policy->CheckAuthorization(req.get_header_value("Authorization"))) {
        t_endpoint = "unauthorized";
        res.set_header("WWW-Authenticate", "Bearer");
        SetError(res, 401, *reason);
        return;
      }
      if (changes_frequencies) {
        if (auto reason = policy->CheckFrequencyChange()) {
          SetError(res, 403, *reason);
          return;
        }
      }
      handler(req, res);
    };
    std::string m = method;
    if (m == "GET") {
      http.Get(pattern, wrapped);
    } else if (m == "POST") {
      http.Post(pattern, wrapped);
    } else if (m == "PUT") {
      http.Put(pattern, wrapped);
    } else {
      http.Delete(pattern, wrapped);
    }
  }

  // Parses the body with `parse`, and on success calls `then`; 400/422 otherwise.
  template <typename T>
  static void WithBody(const httplib::Request& req, httplib::Response& res,
                       Result<T> (*parse)(const nlohmann::json&),
                       const std::function<Reply(const T&)>& then) {
    auto json = ParseJsonBody(req.body);
    if (!json) return SetError(res, 400, json.error().message);
    auto value = parse(*json);
    if (!value) return SetError(res, 422, value.error().message);
    SetReply(res, then(*value));
  }

  static Result<int64_t> QueryInteger(const httplib::Request& req, const char* name,
                                      std::optional<int64_t> fallback) {
    if (!req.has_param(name)) {
      if (fallback) return *fallback;
      return Error{std::string("query parameter '") + name + "' is required"};
    }
    auto value = ParseNonNegativeInteger(name, req.get_param_value(name));
    if (!value) return Error{"query parameter " + value.error().message};
    return value;
  }

  void AddRoutes();
};

void Server::Impl::AddRoutes() {
  JobRegistry& reg = *registry;

  // ---- Zeus pipeline frequency optimizer API -------------------------------------
  Route("POST", "/register_job", "register_job", false, [&reg](const auto& req, auto& res) {
    WithBody<JobRegistration>(req, res, &JobRegistrationFromJson,
                              [&reg](const JobRegistration& r) { return reg.RegisterJob(r); });
  });
  Route("POST", R"(/register_rank/([^/]+))", "register_rank", false,
        [&reg](const auto& req, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<RankInfo>(req, res, &RankInfoFromJson,
                             [&](const RankInfo& info) { return reg.RegisterRank(job_id, info); });
        });
  Route("GET", R"(/schedule/([^/]+))", "schedule", false, [&reg](const auto& req, auto& res) {
    auto rank = QueryInteger(req, "rank", std::nullopt);
    if (!rank) return SetError(res, 422, rank.error().message);
    SetReply(res, reg.FetchSchedule(req.matches[1], *rank));
  });
  Route("POST", R"(/result/([^/]+))", "result", true, [&reg](const auto& req, auto& res) {
    std::string job_id = req.matches[1];
    WithBody<ProfilingResult>(req, res, &ProfilingResultFromJson,
                              [&](const ProfilingResult& r) { return reg.PostResult(job_id, r); });
  });

  // ---- wattcut API, version 1 ------------------------------------------------------
  Route("GET", "/healthz", "healthz", false,
        [](const auto&, auto& res) { res.set_content("{\"status\":\"ok\"}", kJson); });
  Route("GET", "/metrics", "metrics", false, [this](const auto&, auto& res) {
    res.set_content(metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  Route("GET", "/openapi.yaml", "openapi", false,
        [](const auto&, auto& res) { res.set_content(OpenApiYaml(), "application/yaml"); });
  Route("GET", "/v1/jobs", "v1_jobs", false,
        [&reg](const auto&, auto& res) { SetReply(res, reg.ListJobs()); });
  Route("GET", R"(/v1/jobs/([^/]+))", "v1_job", false,
        [&reg](const auto& req, auto& res) { SetReply(res, reg.GetJob(req.matches[1])); });
  Route("DELETE", R"(/v1/jobs/([^/]+))", "v1_job", true,
        [&reg](const auto& req, auto& res) { SetReply(res, reg.DeleteJob(req.matches[1])); });
  Route("PUT", R"(/v1/jobs/([^/]+)/planner)", "v1_planner", true,
        [&reg](const auto& req, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<PlannerSettings>(
              req, res, &PlannerSettingsFromJson,
              [&](const PlannerSettings& p) { return reg.SetPlanner(job_id, p); });
        });
  Route("PUT", R"(/v1/jobs/([^/]+)/profile)", "v1_profile", true,
        [&reg](const auto& req, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<ProfileUpload>(req, res, &ProfileUploadFromJson, [&](const ProfileUpload& u) {
            return reg.UploadProfile(job_id, u);
          });
        });
  Route("POST", R"(/v1/jobs/([^/]+)/rank_profiles)", "v1_rank_profiles", true,
        [&reg](const auto& req, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<RankProfile>(req, res, &RankProfileFromJson, [&](const RankProfile& p) {
            return reg.UploadRankProfile(job_id, p);
          });
        });
  Route("GET", R"(/v1/jobs/([^/]+)/frontier)", "v1_frontier", false,
        [&reg](const auto& req, auto& res) { SetReply(res, reg.FrontierStatus(req.matches[1])); });
  Route("POST", R"(/v1/jobs/([^/]+)/frontier)", "v1_frontier", true,
        [&reg](const auto& req, auto& res) {
          SetReply(res, reg.ComputeFrontierNow(req.matches[1]));
        });
  Route("GET", R"(/v1/jobs/([^/]+)/frontier/points)", "v1_frontier_points", false,
        [&reg](const auto& req, auto& res) {
          auto offset = QueryInteger(req, "offset", 0);
          if (!offset) return SetError(res, 422, offset.error().message);
          auto limit = QueryInteger(req, "limit", 1000);
          if (!limit) return SetError(res, 422, limit.error().message);
          SetReply(res, reg.FrontierPoints(req.matches[1], *offset, *limit));
        });
  Route("PUT", R"(/v1/jobs/([^/]+)/plan)", "v1_plan", true, [&reg](const auto& req, auto& res) {
    std::string job_id = req.matches[1];
    WithBody<PlanSelection>(req, res, &PlanSelectionFromJson,
                            [&](const PlanSelection& s) { return reg.SelectPlan(job_id, s); });
  });
  Route("GET", R"(/v1/jobs/([^/]+)/stragglers)", "v1_stragglers", false,
        [&reg](const auto& req, auto& res) { SetReply(res, reg.ListStragglers(req.matches[1])); });
  Route("POST", R"(/v1/jobs/([^/]+)/stragglers)", "v1_stragglers", true,
        [&reg](const auto& req, auto& res) {
          std::string job_id = req.matches[1];
          WithBody<StragglerReport>(
              req, res, &StragglerReportFromJson,
              [&](const StragglerReport& s) { return reg.ReportStraggler(job_id, s); });
        });
  Route("GET", R"(/v1/jobs/([^/]+)/schedule)", "v1_schedule", false,
        [&reg](const auto& req, auto& res) {
          auto rank = QueryInteger(req, "rank", std::nullopt);
          if (!rank) return SetError(res, 422, rank.error().message);
          SetReply(res, reg.PreviewSchedule(req.matches[1], *rank));
        });
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (impl_) {
    impl_->registry->Shutdown();
    impl_->http.stop();
  }
}

int Server::port() const { return impl_->port; }

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.data_dir.empty()) return Error{"--data-dir is required"};
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Error{"cannot create data dir " + options.data_dir + ": " + ec.message()};

  std::optional<std::string> token;
  if (options.token_file) {
    auto t = ReadTokenFile(*options.token_file);
    if (!t) return t.error();
    token = *t;
  }
  impl->policy = std::make_unique<AccessPolicy>(token, IsLoopbackHost(options.host));

  auto store = JobStore::Open(options.data_dir, options.sync);
  if (!store) return store.error();
  impl->store = std::move(*store);
  impl->registry = std::make_unique<JobRegistry>(*impl->store, impl->metrics, options.registry);
  if (auto s = impl->registry->Load(); !s) return s.error();

  Impl* self = impl.get();
  httplib::Server& http = impl->http;
  size_t threads = options.http_threads > 0
                       ? static_cast<size_t>(options.http_threads)
                       : static_cast<size_t>(options.registry.max_long_polls) + 32;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
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
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_request_start = Clock::now();
    t_endpoint = "unmatched";
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([self](const httplib::Request& req,
                                                                     httplib::Response& res) {
    // Unknown routes answer 401 too when the token is missing: say nothing to strangers.
    if (res.status == 404 && res.body.empty()) {
      if (auto reason = self->policy->CheckAuthorization(req.get_header_value("Authorization"))) {
        t_endpoint = "unauthorized";
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        SetError(res, 401, *reason);
      }
    }
    if (res.body.empty()) {
      SetError(res, res.status,
               std::string(StatusText(res.status)) + ": " + req.method + " " + req.path);
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
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
  });
  impl->AddRoutes();

  if (options.port == 0) {
    impl->port = http.bind_to_any_port(options.host);
    if (impl->port <= 0) return Error{"cannot bind " + options.host + " to a free port"};
  } else {
    if (!http.bind_to_port(options.host, options.port)) {
      return Error{"cannot bind " + options.host + ":" + std::to_string(options.port)};
    }
    impl->port = options.port;
  }
  // cpp-httplib listens with a backlog of 5; a thousand ranks connecting at once need
  // more. listen() again on a listening socket only changes its backlog.
  if (impl->listen_fd >= 0) ::listen(impl->listen_fd, 4096);
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

bool Server::Run() {
  impl_->run_started = true;
  if (impl_->stop_requested) {
    impl_->run_finished = true;
    return true;
  }
  const bool ok = impl_->http.listen_after_bind();
  impl_->run_finished = true;
  return ok;
}

void Server::Stop() {
  impl_->stop_requested = true;
  impl_->registry->Shutdown();
  // Run() began but may not be listening yet: wait until httplib runs, so that stop() lands.
  // (Run() saw stop_requested unset, so it does reach the listen loop, or has already left it.)
  if (impl_->run_started) {
    while (!impl_->http.is_running() && !impl_->run_finished) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

}  // namespace wattcut::server
