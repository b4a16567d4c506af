// An httplib::Server whose connections cannot hold its thread pool hostage.
//
// cpp-httplib (0.11) serves each connection on one thread of a fixed pool for as long as the
// connection lives, so 32 clients that open a connection and send nothing stop a 32-thread
// server, and one that trickles a header line a second holds a thread as long as it likes. Here
// a connection waits for its request on one epoll thread (connection_reactor.h: an idle or slow
// connection costs a descriptor, not a thread), and a worker serves the request once it has
// arrived (httplib's request parsing, routing and handlers, on its own socket stream); a handler
// that answers later (a long poll) defers its response (Defer, deferred_response.h) and frees its
// worker at once: the connection waits in the reactor for the answer. Why not a
// library: Debian 12's libmicrohttpd or Boost.Beast would replace the routing, the handlers'
// httplib::Request and Response and every route of both services; the reactor keeps all of
// that and adds only the waiting (docs/limits.md, Connections, has the measurements).
// Two bounds on top:
//  * a whole-request deadline: a request's line, headers and body must all arrive within
//    `request_timeout` of its first byte, or the connection is closed (408 when a response
//    can still be written). Time spent in the handler (a long poll) does not count.
//  * a per-client-address limit on open connections: a connection beyond it is answered
//    with a 503 at once and closed. Loopback clients are exempt unless `limit_loopback`.
// It serves a Unix socket as well as TCP (ListenOnUnixSocket; Debian 12's httplib 0.11 has no
// AF_UNIX), and tells handlers which connection they serve: an id that is never reused, the
// peer's credentials on a Unix socket (SO_PEERCRED), its address on TCP; the observer hears when
// a connection closes (what a lease bound to a connection needs).
// It also gives handlers the two things httplib lacks: reading a request body with a byte
// limit whatever its Content-Type or transfer encoding, and closing the connection after
// the response (when a body was refused unread; the response then carries "Connection:
// close"). It owns httplib's post-routing handler for that: do not replace it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/http/connection_reactor.h"
#include "wattcut/http/periodic_streams.h"

namespace wattcut::http {

class HttpThreadPool;

// The connection a request came on.
struct ConnectionInfo {
  uint64_t id = 0;  // 1, 2, ... in accept order; never reused within a process
  bool unix_socket = false;
  // Unix socket: the peer process's credentials when it connected (pid 0 when the peer lives
  // in a pid namespace this process cannot see).
  int pid = 0;
  int uid = -1;
  int gid = -1;
  // TCP: the peer's numeric address, and whether it is loopback.
  std::string peer_address;
  bool loopback = false;
};

struct ConnectionLimits {
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  int max_connections_per_client = 64;  // 0: no limit
  bool limit_loopback = false;          // count loopback clients too
};

// Why the server closed a connection on its own.
enum class ConnectionCut { kClientLimit, kRequestTimeout };

class BoundedHttpServer : public httplib::Server {
 public:
  // Called on the connection's thread.
  struct Observer {
    std::function<void()> on_request_begin;  // a request's first byte arrived
    std::function<void(ConnectionCut)> on_cut;
    std::function<void(const ConnectionInfo&)> on_connection_closed;  // after the socket is closed
    // A handler deferred its answer (Defer, on its thread): what to call with the status when the
    // answer goes out (httplib's logger is not called for a deferred request: Deferred()).
    std::function<std::function<void(int status)>()> on_defer;
  };

  BoundedHttpServer(ConnectionLimits limits, Observer observer);
  ~BoundedHttpServer() override;

  const ConnectionLimits& limits() const { return limits_; }

  // The threads that serve requests (kDefaultWorkers unless started before listening). A
  // connection holds one only while a request of its is served: waiting for its next request,
  // or for the rest of this one, it waits on the reactor's one thread (connection_reactor.h).
  static constexpr size_t kDefaultWorkers = 8;
  Status StartWorkers(size_t threads);
  // httplib's, with the reactor and the workers: serves until stop(), then closes the waiting
  // connections and lets the requests under way finish. (They hide httplib's: call them on a
  // BoundedHttpServer.)
  bool listen_after_bind();
  bool listen(const std::string& host, int port, int socket_flags = 0);

  // The request body result of ReadBody: status 0 when read, else the HTTP status to answer
  // (400 malformed, 408 deadline passed, 413 too large, 415 multipart) and why.
  struct BodyRead {
    int status = 0;
    std::string error;
  };
  // Reads the body of `req` into `body`, at most `max_bytes` after any Content-Encoding is
  // undone. A request without Content-Length or chunked encoding has an empty body (RFC 7230
  // 3.3.3). On failure the connection is closed after the response.
  static BodyRead ReadBody(const httplib::Request& req, const httplib::ContentReader& reader, size_t max_bytes,
                           std::string& body);
  // Binds and listens on a Unix socket at `path` with file mode `mode` and, unless empty, group
  // `group` (a name or a number); then serves it like listen_after_bind() until stop(). A socket
  // file left by a process that is gone is replaced; one that a live process still answers on
  // is not ("another process listens on PATH"). Fails before serving with a message naming the
  // path and the system error. The file is removed when serving ends.
  bool ListenOnUnixSocket(const std::string& path, unsigned mode, const std::string& group, std::string& error);
  // Binds the Unix socket (the first half of ListenOnUnixSocket), for a caller that serves it
  // later with listen_after_bind() on another thread.
  bool BindUnixSocket(const std::string& path, unsigned mode, const std::string& group, std::string& error);

  // Within a handler: the connection it serves (nullptr outside one).
  static const ConnectionInfo* CurrentConnection();
  // Within a handler: close this connection once the response is written.
  static void CloseAfterResponse();
  // Within a handler: never close this connection for being idle (keep-alive timeout); the client's
  // close, its request deadlines and the server's stop still end it. For a connection that holds
  // something only the client's going away may end (the agent's zeusd clients' leases).
  static void KeepOpenWhileIdle();
  // Within a handler: answer this request later, through the returned handle (deferred_response.h:
  // a long poll then holds its descriptor and the handle, not this worker). What the handler puts
  // in its httplib::Response is dropped. A second call returns the same handle; nullptr outside a
  // handler.
  static std::shared_ptr<DeferredResponse> Defer(const httplib::Request& req, DeferredResponse::Ends ends);
  // Within a handler: answer with a never-ending stream (periodic_streams.h): `status`, `content_type`
  // and `headers` now, then every `period` the piece `produce` gives, the first at once. Between its
  // pieces the stream holds its descriptor and its record, no thread; its client going away ends it
  // (its producer is destroyed then). nullptr outside a handler.
  static std::shared_ptr<DeferredResponse> StreamEvery(const httplib::Request& req, int status,
                                                       std::string content_type, DeferredResponse::Headers headers,
                                                       std::chrono::steady_clock::duration period,
                                                       PeriodicStreams::Produce produce);
  // Within a handler or the logger: the current request's answer was deferred.
  static bool Deferred();
  // Within a handler, the error handler or the logger: the current request missed its
  // deadline.
  static bool RequestTimedOut();
  // True when the request declares a body (Content-Length > 0 or chunked).
  static bool HasBody(const httplib::Request& req);

 private:
  bool process_and_close_socket(socket_t sock) override;
  struct Served;
  void Serve(std::unique_ptr<ConnectionReactor::Connection> connection);
  void Closed(ConnectionReactor::Connection& connection);
  enum class Admission { kUncounted, kCounted, kRefused };
  // Counts `peer` in, unless it is exempt or already at its limit.
  Admission Admit(const std::string& peer, bool loopback);
  void Release(const std::string& peer);
  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }
  void RemoveUnixSocketFile();

  ConnectionLimits limits_;
  Observer observer_;
  std::atomic<uint64_t> next_connection_id_{1};
  std::string unix_socket_path_;  // to remove when serving ends
  std::mutex mu_;
  std::map<std::string, int> open_by_client_;
  std::unique_ptr<HttpThreadPool> workers_;
  PeriodicStreams streams_;    // its streams end (their last chunks posted) before the reactor stops
  ConnectionReactor reactor_;  // after workers_: stopped (in the destructor) before they are
};

}  // namespace wattcut::http
