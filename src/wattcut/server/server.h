// The planning server: the HTTP routes over a JobRegistry, a JobStore and Metrics.
// Endpoints are listed in openapi.yaml (served at GET /openapi.yaml) and docs/server.md.
//
// Threads: a fixed pool of workers serves requests (httplib's parsing, routing and handlers); a
// connection waiting for its next request, and a schedule long poll waiting for its round, hold
// a descriptor and a small record on the reactor's one thread, no worker (http/deferred_response.h).
// At most max_long_polls requests wait at once (the next one gets a 503 at once); a job of N
// ranks needs max_long_polls >= N - 1. Connections are bounded (BoundedHttpServer): a request must arrive whole within
// the request timeout, and one client address may hold only so many connections.
//
// One server per data folder (DataDirLock); every request body is read by the server
// itself, up to max_body_bytes whatever its Content-Type.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/http/bounded_http_server.h"
#include "wattcut/server/job_registry.h"

namespace wattcut::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 7787;  // 0: any free port
  std::string data_dir;
  std::optional<std::string> token_file;
  size_t max_body_bytes = size_t{16} << 20;
  static constexpr int kDefaultHttpThreads = 16;
  int http_threads = 0;  // 0: kDefaultHttpThreads
  SyncMode sync = SyncMode::kFull;
  http::ConnectionLimits connections;
  JobRegistry::Options registry;
};

class Server {
 public:
  // Locks the data folder, opens the store, loads the stored jobs (quarantining the ones
  // that cannot be read) and binds the port; does not serve yet.
  static Result<std::unique_ptr<Server>> Create(const ServerOptions& options);
  ~Server();

  int port() const;
  // True when the server listens on loopback only: the host is a numeric loopback address
  // or "localhost", and the bound socket's address is loopback too.
  bool loopback_only() const;
  // Stored jobs that could not be loaded, with the reason; their rows are kept.
  std::vector<QuarantinedJob> quarantined_jobs() const;
  // Serves until Stop() (which may also come first, from another thread: Run() then returns at
  // once); returns false if the listener failed (run_error() says why when known).
  bool Run();
  const std::string& run_error() const;
  // Thread-safe; wakes every long poll, then stops the listener.
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The OpenAPI document (openapi.yaml, embedded at build time).
const std::string& OpenApiYaml();

}  // namespace wattcut::server
