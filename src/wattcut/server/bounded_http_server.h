// An httplib::Server whose connections cannot hold its thread pool hostage.
//
// cpp-httplib (0.11) serves each connection on one thread of a fixed pool and only bounds
// each recv() (its read timeout), so a client that trickles one header line a second holds a
// thread for as long as it likes, and a few such clients starve every other request. This
// subclass serves connections itself (httplib's keep-alive loop, with its own socket stream)
// and adds two bounds:
//  * a whole-request deadline: a request's line, headers and body must all arrive within
//    `request_timeout` of its first byte, or the connection is closed (408 when a response
//    can still be written). Time spent in the handler (a long poll) does not count.
//  * a per-client-address limit on open connections: a connection beyond it is answered
//    with a 503 at once and closed. Loopback clients are exempt unless `limit_loopback`.
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
#include <mutex>
#include <string>

namespace wattcut::server {

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
  };

  BoundedHttpServer(ConnectionLimits limits, Observer observer);

  const ConnectionLimits& limits() const { return limits_; }

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
  // Within a handler: close this connection once the response is written.
  static void CloseAfterResponse();
  // Within a handler, the error handler or the logger: the current request missed its
  // deadline.
  static bool RequestTimedOut();
  // True when the request declares a body (Content-Length > 0 or chunked).
  static bool HasBody(const httplib::Request& req);

 private:
  bool process_and_close_socket(socket_t sock) override;
  enum class Admission { kUncounted, kCounted, kRefused };
  // Counts `peer` in, unless it is exempt or already at its limit.
  Admission Admit(const std::string& peer, bool loopback);
  void Release(const std::string& peer);
  bool stopping() const { return svr_sock_ == INVALID_SOCKET; }

  ConnectionLimits limits_;
  Observer observer_;
  std::mutex mu_;
  std::map<std::string, int> open_by_client_;
};

}  // namespace wattcut::server
