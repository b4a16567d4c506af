// An HTTP/1.1 client for wattcut's own services (the node agent, a BMC's Redfish service) over a
// Unix socket or TCP, on libcurl (Debian 12's cpp-httplib 0.11 client has no Unix sockets).
// One client keeps one connection open and reuses it; calls from several threads are serialised.
// A host name with several addresses is tried at each in turn by libcurl itself (checked with
// curl --resolve NAME:PORT:[::1],127.0.0.2,127.0.0.1: it went on past the two that refused).
// Every call is bounded by the endpoint's timeouts and returns errors as values:
//   * the service could not be reached or did not answer in time: ErrorCode::kUnavailable
//     ("cannot reach unix:/run/wattcut/agent.sock: Couldn't connect to server");
//   * it answered: the status and body, whatever the status (the caller decides what a 4xx means).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "wattcut/base/result.h"

namespace wattcut::http {

struct HttpEndpoint {
  // Exactly one of the two: a Unix socket path, or a base URL ("http://127.0.0.1:7788",
  // "https://bmc.example/redfish/v1/Chassis/1/Power"; paths of requests are appended to it).
  std::string unix_socket;
  std::string base_url;
  std::string bearer_token;  // sent as "Authorization: Bearer <token>" when not empty
  std::string basic_auth;    // "user:password" for HTTP basic authentication, when not empty
  bool verify_tls = true;    // https: check the server's certificate (a BMC's is often self-signed)
  double connect_timeout_s = 2.0;
  double timeout_s = 10.0;  // the whole request, connection included
  // A longer answer is refused (ErrorCode::kMalformed): a confused service cannot fill memory.
  size_t max_response_bytes = size_t{64} << 20;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

class HttpClient {
 public:
  static Result<std::unique_ptr<HttpClient>> Create(HttpEndpoint endpoint);
  ~HttpClient();

  // `path` starts with '/' ("/v1/gpus?x=1"). A body is sent as application/json.
  Result<HttpResponse> Request(std::string_view method, std::string_view path, std::string_view body = {});
  Result<HttpResponse> Get(std::string_view path) { return Request("GET", path); }

  // A streamed GET (the agent's NDJSON streams): `on_line` gets each line without its '\n' (a last
  // line without one too) and returns false to stop, which closes the connection. Not bounded by
  // timeout_s (a stream lasts as long as it is read); timeout_s without a byte (noticed within
  // about a second: libcurl's progress checks) ends it with kDeadlineExceeded. A 2xx stream comes back with an empty
  // body once it ends; the status of a stream that the service refused comes back with its body.
  // The stream holds the client (other calls wait): give a stream a client of its own.
  Result<HttpResponse> StreamLines(std::string_view path, const std::function<bool(std::string_view line)>& on_line);

  // "unix:/run/wattcut/agent.sock" or the base URL: for messages.
  const std::string& description() const;

 private:
  struct Impl;
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wattcut::http
