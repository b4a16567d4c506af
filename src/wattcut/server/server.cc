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
#include "wattcut/server/job_routes.h"
#include "wattcut/server/route_answers.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

namespace {

using Clock = std::chrono::steady_clock;

// One request is handled start to finish on one thread, so the route label and the
// start time travel from the start of the request to the logger in thread-locals.
thread_local Clock::time_point t_request_start;
thread_local const char* t_endpoint = "unmatched";
thread_local const char* t_method = "GET";

// Bodies at least this large leave enough freed memory behind in the handling thread's
// malloc arena to be worth giving back to the system (malloc_trim) once handled.
constexpr size_t kTrimAfterBodyBytes = size_t{1} << 20;

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

  // Registers a route (job_routes.h); `changes_frequencies` routes are refused (403) when the
  // policy says so. Authentication is checked before routing (PreRoute).
  void Add(Route route) {
    const char* label = route.label;
    const bool changes_frequencies = route.changes_frequencies;
    RouteHandler handler = std::move(route.handler);
    const std::string& pattern = route.pattern;
    const std::string m = route.method;
    if (m == "GET") {
      http->Get(pattern,
                [this, label, changes_frequencies, handler](const httplib::Request& req, httplib::Response& res) {
                  t_endpoint = label;
                  t_method = req.method == "HEAD" ? "HEAD" : "GET";
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

  // Server::Create's steps, in order (with the token read between the first two): the data
  // folder created and locked (data_dir_lock.h); the store opened and its jobs loaded; the HTTP
  // server's settings and hooks; AddRoutes; the port bound and whether it is loopback only.
  Status LockDataDir();
  Status OpenRegistry();
  void SetUpHttp();
  void AddRoutes();
  Status Bind();
};

void Server::Impl::AddRoutes() {
  JobRegistry& reg = *registry;
  // The status page (status_page.h).
  Add({"GET", "/", "status_page", false, [this, &reg](const auto&, const std::string&, auto& res) {
         ServerStatusView view;
         view.version = WATTCUT_VERSION;
         view.uptime_s = std::chrono::duration<double>(Clock::now() - created_at).count();
         reg.FillStatusView(view, kStatusPageMaxJobs);
         res.set_content(StatusPageHtml(view), "text/html; charset=utf-8");
       }});
  Add({"GET", "/healthz", "healthz", false,
       [this](const auto&, const std::string&, auto& res) { SetReply(res, Health()); }});
  Add({"GET", "/metrics", "metrics", false, [this, &reg](const auto&, const std::string&, auto& res) {
         metrics.SetJobStates(reg.CountJobStates());
         metrics.SetPowerTargets(reg.PowerTargetGauges());
         metrics.SetMeasuredGpuEnergies(reg.MeasuredGpuEnergyGauges());
         res.set_content(metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
       }});
  Add({"GET", "/openapi.yaml", "openapi", false,
       [](const auto&, const std::string&, auto& res) { res.set_content(OpenApiYaml(), "application/yaml"); }});
  for (Route& route : JobRoutes(reg)) Add(std::move(route));

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

Status Server::Impl::LockDataDir() {
  if (options.data_dir.empty()) return Error{"--data-dir is required"};
  std::error_code ec;
  std::filesystem::create_directories(options.data_dir, ec);
  if (ec) return Error{"cannot create data dir " + options.data_dir + ": " + ec.message()};
  auto lock = DataDirLock::Acquire(options.data_dir);
  if (!lock) return lock.error();
  data_dir_lock = std::move(*lock);
  return Status::Ok();
}

Status Server::Impl::OpenRegistry() {
  auto opened = JobStore::Open(options.data_dir, options.sync);
  if (!opened) return opened.error();
  store = std::move(*opened);
  registry = std::make_unique<JobRegistry>(*store, metrics, options.registry);
  if (auto s = registry->Load(); !s) return s.error();
  return Status::Ok();
}

void Server::Impl::SetUpHttp() {
  Impl* self = this;
  http::BoundedHttpServer::Observer observer;
  observer.on_request_begin = [] { t_request_start = Clock::now(); };
  // A deferred answer (a schedule long poll) is counted when it goes out, with the time it waited.
  observer.on_defer = [self]() -> std::function<void(int)> {
    return [self, endpoint = t_endpoint, method = t_method, start = t_request_start](int status) {
      self->metrics.RecordRequest(endpoint, method, status,
                                  std::chrono::duration<double>(Clock::now() - start).count());
    };
  };
  observer.on_cut = [self](http::ConnectionCut cut) {
    self->metrics.RecordConnectionCut(cut == http::ConnectionCut::kClientLimit ? "client_limit" : "request_timeout");
  };
  http = std::make_unique<http::BoundedHttpServer>(options.connections, std::move(observer));
  http::BoundedHttpServer& server = *http;
  server.set_payload_max_length(options.max_body_bytes);
  server.set_keep_alive_max_count(1000);
  server.set_keep_alive_timeout(5);
  server.set_tcp_nodelay(true);
  server.set_socket_options([self](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    // Accepted sockets inherit this: no Nagle delay between a response's header and
    // body writes (40 ms per request against a delayed-ACK client otherwise).
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    self->listen_fd = sock;
  });
  server.set_pre_routing_handler(
      [self](const httplib::Request& req, httplib::Response& res) { return self->PreRoute(req, res); });
  // Error answers without a body get theirs from BoundedHttpServer's error handler.
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    SetError(res, 500, "internal error: " + what);
  });
  server.set_logger([self](const httplib::Request& req, const httplib::Response& res) {
    if (http::BoundedHttpServer::Deferred()) {  // counted when its answer goes out (on_defer)
      t_endpoint = "unmatched";
      return;
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t_request_start).count();
    self->metrics.RecordRequest(t_endpoint, req.method, res.status, seconds);
    t_endpoint = "unmatched";
  });
}

Status Server::Impl::Bind() {
  if (options.port == 0) {
    port = http->bind_to_any_port(options.host);
    if (port <= 0) {
      return Error{"cannot bind " + options.host + " to a free port: " + http::BindProblem(options.host, 0)};
    }
  } else {
    if (!http->bind_to_port(options.host, options.port)) {
      const std::string problem = http::BindProblem(options.host, options.port);
      return Error{
          "cannot bind " + options.host + ":" + std::to_string(options.port) + ": " +
          (problem.empty() ? "it binds now; try again" : problem) +
          (problem == "Address already in use"
               ? " (another wattcut serve, or another program, listens there: --listen HOST:PORT picks another)"
               : "")};
    }
    port = options.port;
  }
  // cpp-httplib listens with a backlog of 5; a thousand ranks connecting at once need
  // more. listen() again on a listening socket only changes its backlog.
  if (listen_fd >= 0) ::listen(listen_fd, 4096);
  // Loopback only if the name says so and the address it was bound to agrees.
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  loopback_only = http::IsLoopbackHost(options.host) && listen_fd >= 0 &&
                  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_length) == 0 &&
                  http::IsLoopbackAddress(bound);
  return Status::Ok();
}

Result<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (Status s = impl->LockDataDir(); !s) return s.error();
  std::optional<std::string> token;
  if (options.token_file) {
    auto t = ReadTokenFile(*options.token_file);
    if (!t) return t.error();
    token = *t;
  }
  if (Status s = impl->OpenRegistry(); !s) return s.error();
  impl->SetUpHttp();
  impl->AddRoutes();
  if (Status s = impl->Bind(); !s) return s.error();
  impl->policy = std::make_unique<AccessPolicy>(token, impl->loopback_only);
  // The workers serve requests; connections wait for their requests, and long polls for their
  // answers, on the reactor (a waiting long poll holds no worker). Started last, so that a pool
  // that cannot start is an error of Create().
  const size_t threads =
      options.http_threads > 0 ? static_cast<size_t>(options.http_threads) : ServerOptions::kDefaultHttpThreads;
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
