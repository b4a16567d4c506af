// Many HTTP requests at once from one thread: a row controller asks a thousand node agents every
// second. Each endpoint has one keep-alive connection, kept from one Run to the next; one epoll
// waits on all of them, so a wake-up costs the connections that have something.
//
// Why not libcurl here (HttpClient is libcurl): bench/row_control_bench.cc reads 1,000 agents with
// both in one run, and libcurl took 4.1x the CPU of this client (6.4 % against 1.6 % of a core a
// period; docs/polca.md), whether on a pool of threads or through its multi_socket interface on
// one thread. This client does only what the agents need: plain HTTP/1.1 over TCP (https and Unix
// sockets are HttpClient's), answers framed by Content-Length, chunks or the connection's end
// (http_response_parser.h).
//
// Every endpoint's options mean what they mean to HttpClient: the bearer token on every request,
// connect_timeout_s, timeout_s for the whole request, max_response_bytes; and so do its errors:
// the service could not be reached or did not answer within timeout_s is kUnavailable ("cannot
// reach http://10.1.0.11:7788: ..."), an answer over the limit or not HTTP is kMalformed, any
// answer is its status and body.
//
// A host name is resolved (getaddrinfo, which blocks) when a connection is opened, not at each
// request: with keep-alive that is once, and again only after the connection was lost. Its
// addresses are tried in the resolver's order until one connects (host_addresses.h): one that
// refuses moves on at once, one that does not answer after its equal share of what is left of
// connect_timeout_s; when all fail the error names each address and why ("cannot reach
// http://localhost:7788: [::1]:7788: Connection refused; 127.0.0.1:7788: Connection refused").
// A request sent on a kept-alive connection that the server had closed meanwhile (no byte of an
// answer came back) is sent once more on a new connection, as HTTP/1.1 clients do for requests
// that may be repeated; POST is never sent twice.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/http/host_addresses.h"
#include "wattcut/http/http_client.h"

namespace wattcut::http {

struct HttpCall {
  size_t endpoint = 0;  // index into the endpoints given to Create
  std::string method;   // GET, PUT, DELETE, POST, HEAD
  std::string path;     // starts with '/'
  std::string body;     // sent as application/json when not empty, or for PUT/POST/PATCH
};

class ConcurrentRequests {
 public:
  using Clock = std::chrono::steady_clock;

  // Every endpoint a base URL "http://HOST[:PORT][/PREFIX]" (HOST a name, an IPv4 address or an
  // [IPv6] one; PORT 80 when left out). Connects to none of them yet. `resolver` turns a host
  // into its addresses (ResolveHost when empty; tests give a fixed list).
  static Result<std::unique_ptr<ConcurrentRequests>> Create(std::vector<HttpEndpoint> endpoints,
                                                            HostResolver resolver = nullptr);
  ~ConcurrentRequests();
  ConcurrentRequests(const ConcurrentRequests&) = delete;
  ConcurrentRequests& operator=(const ConcurrentRequests&) = delete;

  size_t size() const;
  // The endpoint's base URL, for messages.
  const std::string& description(size_t endpoint) const;

  // Runs every call and returns one result per call, in the order given. Calls to the same
  // endpoint run one after the other in the order given; different endpoints' at the same time.
  // Returns by `deadline`: a call still under way then is abandoned (its connection closed) and
  // is kDeadlineExceeded ("no answer by the deadline"), one not yet sent likewise ("not sent"):
  // nothing of a Run is left running after it returns. A call naming no endpoint is
  // kInvalidArgument. Runs on several threads take turns.
  std::vector<Result<HttpResponse>> Run(const std::vector<HttpCall>& calls, Clock::time_point deadline);

 private:
  struct Impl;
  explicit ConcurrentRequests(std::unique_ptr<Impl> impl);

  std::mutex mutex_;  // one Run at a time
  std::unique_ptr<Impl> impl_;
};

}  // namespace wattcut::http
