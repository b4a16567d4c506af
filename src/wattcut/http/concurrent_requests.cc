#include "wattcut/http/concurrent_requests.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/http/host_addresses.h"
#include "wattcut/http/http_response_parser.h"

namespace wattcut::http {

namespace {

using Clock = ConcurrentRequests::Clock;

// How often the timeouts of the requests under way are looked at (they are 50 ms and more).
constexpr auto kTimeoutScan = std::chrono::milliseconds(5);

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string What(const HttpCall& call) { return call.method + " " + PrintableText(call.path); }

// An endpoint's base URL taken apart.
struct Target {
  std::string host;           // without brackets
  std::string port;           // digits
  std::string prefix;         // "" or "/api", prepended to every path
  std::string fixed_headers;  // Host, Authorization, and the rest every request sends
};

Result<Target> ParseBaseUrl(const HttpEndpoint& endpoint) {
  const std::string& url = endpoint.base_url;
  const std::string shown = "base URL '" + PrintableText(url) + "'";
  if (url.rfind("http://", 0) != 0) {
    return Error::InvalidArgument(shown + ": expected http://HOST[:PORT] (plain HTTP over TCP)");
  }
  std::string rest = url.substr(7);
  const size_t slash = rest.find('/');
  Target target;
  if (slash != std::string::npos) {
    target.prefix = rest.substr(slash);
    rest = rest.substr(0, slash);
    while (!target.prefix.empty() && target.prefix.back() == '/') target.prefix.pop_back();
  }
  std::string authority = rest;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return Error::InvalidArgument(shown + ": an IPv6 address without its ']'");
    target.host = authority.substr(1, close - 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') return Error::InvalidArgument(shown + ": expected ':PORT' after ']'");
    target.port = after.empty() ? "80" : after.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    target.host = authority.substr(0, colon);
    target.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  }
  const bool port_ok =
      !target.port.empty() && target.port.size() <= 5 &&
      std::all_of(target.port.begin(), target.port.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      std::stoi(target.port) >= 1 && std::stoi(target.port) <= 65535;
  if (target.host.empty()) return Error::InvalidArgument(shown + ": no host");
  if (!port_ok) return Error::InvalidArgument(shown + ": expected a port 1..65535");
  target.fixed_headers = "Host: " + authority + "\r\n";
  if (!endpoint.bearer_token.empty()) target.fixed_headers += "Authorization: Bearer " + endpoint.bearer_token + "\r\n";
  return target;
}

}  // namespace

// One endpoint: its connection, and its part of the Run under way.
struct Connection {
  HttpEndpoint endpoint;
  Target target;
  int fd = -1;
  bool connecting = false;  // a non-blocking connect is under way
  // The host's addresses, resolved when a connection opens, and tried in order until one
  // connects: the one being tried, and "ADDRESS: why" for each tried before it.
  std::vector<SocketAddress> addresses;
  size_t address = 0;
  std::vector<std::string> failed;
  bool reused = false;    // the request went out on a connection kept from an earlier one
  uint32_t watching = 0;  // the epoll events asked for
  std::string out;        // the request
  size_t sent = 0;
  std::optional<HttpResponseParser> parser;
  Clock::time_point connect_deadline;  // for all the host's addresses together
  Clock::time_point attempt_deadline;  // for the one being tried
  double attempt_timeout_s = 0;        // its share of the connect timeout
  Clock::time_point request_deadline;
  // This Run's calls to the endpoint, in order, and the one under way.
  std::vector<size_t> calls;
  size_t next = 0;
  bool active = false;
  bool sent_again = false;  // the call under way was already sent once more (see the header)
};

struct ConcurrentRequests::Impl {
  HostResolver resolver;
  std::vector<Connection> connections;
  int epoll_fd = -1;

  ~Impl() {
    for (Connection& c : connections) Close(c);
    if (epoll_fd >= 0) ::close(epoll_fd);
  }

  void Close(Connection& c) {
    if (c.fd >= 0) ::close(c.fd);  // leaves the epoll set with it
    c.fd = -1;
    c.connecting = false;
    c.watching = 0;
  }

  void Watch(Connection& c, size_t index, uint32_t events) {
    if (c.watching == events) return;
    epoll_event event{};
    event.events = events;
    event.data.u64 = index;
    ::epoll_ctl(epoll_fd, c.watching == 0 && events != 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd, &event);
    c.watching = events == 0 ? 0 : events;
  }

  // Opens a new connection (non-blocking) to the host's first address that takes it; an error
  // when none can even begin.
  Status Connect(Connection& c, size_t index) {
    Close(c);
    auto addresses = resolver(c.target.host, c.target.port);
    if (!addresses.ok())
      return Error::Unavailable("cannot reach " + c.endpoint.base_url + ": " + addresses.error().message);
    c.addresses = std::move(*addresses);
    c.address = 0;
    c.failed.clear();
    return ConnectToNextAddress(c, index);
  }

  // Begins a connect to c.addresses[c.address], or to the next one that does not refuse at once.
  // Each attempt may take an equal share of what is left of the connect timeout, so a host whose
  // first address drops packets still gets its next one tried in time. The error, when every
  // address failed (or time ran out), names each address and why.
  Status ConnectToNextAddress(Connection& c, size_t index) {
    for (; c.address < c.addresses.size(); ++c.address) {
      const Clock::time_point now = Clock::now();
      if (now >= c.connect_deadline) break;
      const SocketAddress& to = c.addresses[c.address];
      const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        c.failed.push_back(to.Text() + ": socket: " + std::strerror(errno));
        continue;
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      const int connected = ::connect(fd, to.get(), to.length);
      const int connect_errno = errno;
      if (connected != 0 && connect_errno != EINPROGRESS) {
        ::close(fd);
        c.failed.push_back(to.Text() + ": " + std::strerror(connect_errno));
        continue;
      }
      c.fd = fd;
      c.connecting = connected != 0;
      c.reused = false;
      const Clock::duration share = (c.connect_deadline - now) / static_cast<int64_t>(c.addresses.size() - c.address);
      c.attempt_deadline = now + share;
      c.attempt_timeout_s = std::round(std::chrono::duration<double>(share).count() * 1000) / 1000;
      Watch(c, index, EPOLLOUT);
      return Status::Ok();
    }
    return Error::Unavailable(NotConnected(c));
  }

  // The attempt under way failed (`why`): the next address is tried.
  Status ConnectionAttemptFailed(Connection& c, size_t index, const std::string& why) {
    c.failed.push_back(c.addresses[c.address].Text() + ": " + why);
    Close(c);
    ++c.address;
    return ConnectToNextAddress(c, index);
  }

  static std::string NotConnected(const Connection& c) {
    std::string why;
    for (const std::string& failure : c.failed) why += (why.empty() ? "" : "; ") + failure;
    const size_t untried = c.addresses.size() - std::min(c.address, c.addresses.size());
    if (untried > 0) {
      why += std::string(why.empty() ? "" : "; ") + "no connection within " +
             GeneralText(c.endpoint.connect_timeout_s) + " s (" + std::to_string(untried) + " of " +
             std::to_string(c.addresses.size()) + " addresses not tried)";
    }
    return "cannot reach " + c.endpoint.base_url + ": " + why;
  }

  // Starts the connection's next call: builds the request and sends it (or connects first).
  Status Start(Connection& c, size_t index, const HttpCall& call) {
    const bool sends_body =
        !call.body.empty() || call.method == "POST" || call.method == "PUT" || call.method == "PATCH";
    c.out.clear();
    c.out.reserve(160 + call.body.size());
    c.out.append(call.method).append(" ").append(c.target.prefix).append(call.path).append(" HTTP/1.1\r\n");
    c.out.append(c.target.fixed_headers);
    if (sends_body) {
      c.out.append("Content-Type: application/json\r\nContent-Length: ")
          .append(std::to_string(call.body.size()))
          .append("\r\n");
    }
    c.out.append("\r\n").append(call.body);
    c.sent = 0;
    c.parser.emplace(c.endpoint.max_response_bytes, call.method == "HEAD");
    const Clock::time_point now = Clock::now();
    c.request_deadline = now + Seconds(c.endpoint.timeout_s);
    c.connect_deadline = std::min(c.request_deadline, now + Seconds(c.endpoint.connect_timeout_s));
    if (c.fd >= 0) {
      c.reused = true;
      Watch(c, index, EPOLLOUT);
      return Status::Ok();
    }
    return Connect(c, index);
  }

  // Sends what is left of the request; then waits for the answer.
  Status Send(Connection& c, size_t index) {
    while (c.sent < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        Watch(c, index, EPOLLOUT);
        return Status::Ok();
      }
      return Error::Unavailable(std::string("send: ") + std::strerror(errno));
    }
    Watch(c, index, EPOLLIN | EPOLLRDHUP);
    return Status::Ok();
  }

  // Reads what arrived. Ok while the answer is incomplete or complete (see the parser's state);
  // an error for a failed read.
  Status Receive(Connection& c) {
    char buffer[16384];
    for (;;) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        c.parser->Feed(std::string_view(buffer, static_cast<size_t>(n)));
        if (c.parser->state() != HttpResponseParser::State::kIncomplete) return Status::Ok();
        continue;
      }
      if (n == 0) {
        c.parser->FeedEnd();
        return Status::Ok();
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
      if (errno == ECONNRESET) {
        c.parser->FeedEnd();
        return Status::Ok();
      }
      return Error::Unavailable(std::string("recv: ") + std::strerror(errno));
    }
  }
};

ConcurrentRequests::ConcurrentRequests(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ConcurrentRequests::~ConcurrentRequests() = default;

Result<std::unique_ptr<ConcurrentRequests>> ConcurrentRequests::Create(std::vector<HttpEndpoint> endpoints,
                                                                       HostResolver resolver) {
  auto impl = std::make_unique<Impl>();
  impl->resolver = resolver ? std::move(resolver) : HostResolver(ResolveHost);
  impl->connections.resize(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    HttpEndpoint& endpoint = endpoints[i];
    if (!endpoint.unix_socket.empty()) {
      return Error::InvalidArgument("endpoint " + std::to_string(i) +
                                    ": a Unix socket; ConcurrentRequests speaks HTTP over TCP (use HttpClient)");
    }
    if (!(endpoint.connect_timeout_s > 0 && endpoint.connect_timeout_s < 1e6 && endpoint.timeout_s > 0 &&
          endpoint.timeout_s < 1e6)) {
      return Error::InvalidArgument("endpoint " + std::to_string(i) +
                                    ": HTTP timeouts must be positive numbers of seconds below 1000000");
    }
    if (endpoint.max_response_bytes == 0) {
      return Error::InvalidArgument("endpoint " + std::to_string(i) + ": max_response_bytes must be positive");
    }
    auto target = ParseBaseUrl(endpoint);
    if (!target.ok()) return target.error();
    while (endpoint.base_url.size() > 7 && endpoint.base_url.back() == '/') endpoint.base_url.pop_back();
    impl->connections[i].target = std::move(*target);
    impl->connections[i].endpoint = std::move(endpoint);
  }
  impl->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (impl->epoll_fd < 0) return Error::Unavailable(std::string("epoll_create1: ") + std::strerror(errno));
  return std::unique_ptr<ConcurrentRequests>(new ConcurrentRequests(std::move(impl)));
}

size_t ConcurrentRequests::size() const { return impl_->connections.size(); }

const std::string& ConcurrentRequests::description(size_t endpoint) const {
  return impl_->connections.at(endpoint).endpoint.base_url;
}

std::vector<Result<HttpResponse>> ConcurrentRequests::Run(const std::vector<HttpCall>& calls,
                                                          Clock::time_point deadline) {
  std::lock_guard run_lock(mutex_);
  Impl& impl = *impl_;
  std::vector<std::optional<Result<HttpResponse>>> results(calls.size());
  std::vector<size_t> lanes;  // the endpoints this Run asks, in order of their first call
  for (size_t k = 0; k < calls.size(); ++k) {
    if (calls[k].endpoint >= impl.connections.size()) {
      results[k].emplace(Error::InvalidArgument("call " + std::to_string(k) + " (" + What(calls[k]) +
                                                ") names endpoint " + std::to_string(calls[k].endpoint) + " of " +
                                                std::to_string(impl.connections.size())));
      continue;
    }
    Connection& c = impl.connections[calls[k].endpoint];
    if (c.calls.empty()) lanes.push_back(calls[k].endpoint);
    c.calls.push_back(k);
  }

  size_t active = 0;
  // The call under way on `c` ends with `result`; the next one starts.
  std::function<void(Connection&, size_t, Result<HttpResponse>)> finish;
  auto start_next = [&](Connection& c, size_t index) {
    while (c.next < c.calls.size() && Clock::now() < deadline) {
      const HttpCall& call = calls[c.calls[c.next]];
      c.sent_again = false;
      Status started = impl.Start(c, index, call);
      if (started.ok() && !c.connecting) started = impl.Send(c, index);
      if (started.ok()) {
        c.active = true;
        ++active;
        return;
      }
      impl.Close(c);
      results[c.calls[c.next]].emplace(started.error());
      ++c.next;
    }
  };
  finish = [&](Connection& c, size_t index, Result<HttpResponse> result) {
    results[c.calls[c.next]].emplace(std::move(result));
    c.active = false;
    --active;
    ++c.next;
    start_next(c, index);
  };
  // The call under way failed on its connection: sent once more on a new connection when it may
  // be (a kept-alive connection the server had closed), else that is its error.
  auto lost = [&](Connection& c, size_t index, const Error& error) {
    const HttpCall& call = calls[c.calls[c.next]];
    const bool again = c.reused && !c.sent_again && !c.parser->started() && call.method != "POST";
    impl.Close(c);
    if (again) {
      Status restarted = impl.Start(c, index, call);
      c.sent_again = true;
      if (restarted.ok() && !c.connecting) restarted = impl.Send(c, index);
      if (restarted.ok()) return;
      impl.Close(c);
      finish(c, index, restarted.error());
      return;
    }
    finish(c, index,
           error.code == ErrorCode::kMalformed
               ? error
               : Error::Unavailable("cannot reach " + c.endpoint.base_url + ": " + What(call) + ": " + error.message));
  };
  // What the parser's state means for the call under way.
  auto answered = [&](Connection& c, size_t index) {
    const HttpCall& call = calls[c.calls[c.next]];
    HttpResponseParser& parser = *c.parser;
    switch (parser.state()) {
      case HttpResponseParser::State::kIncomplete:
        return;
      case HttpResponseParser::State::kComplete: {
        HttpResponse response;
        response.status = parser.status();
        response.content_type = parser.content_type();
        response.body = std::move(parser.body());
        if (!parser.keep_alive()) impl.Close(c);
        finish(c, index, std::move(response));
        return;
      }
      case HttpResponseParser::State::kTooLarge:
        impl.Close(c);
        finish(c, index,
               Error::Malformed(c.endpoint.base_url + ": the answer to " + What(call) + " is larger than " +
                                std::to_string(c.endpoint.max_response_bytes) + " bytes"));
        return;
      case HttpResponseParser::State::kMalformed:
        if (!parser.started()) {
          lost(c, index, Error::Unavailable(parser.problem()));
        } else {
          impl.Close(c);
          finish(c, index,
                 Error::Malformed(c.endpoint.base_url + ": the answer to " + What(call) + ": " + parser.problem()));
        }
        return;
    }
  };

  for (size_t index : lanes) start_next(impl.connections[index], index);

  std::vector<epoll_event> events(256);
  Clock::time_point next_scan = Clock::now() + kTimeoutScan;
  while (active > 0) {
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::min(deadline, next_scan) - now);
    const int ready = ::epoll_wait(impl.epoll_fd, events.data(), static_cast<int>(events.size()),
                                   static_cast<int>(std::clamp<int64_t>(wait_ms.count() + 1, 0, 1000)));
    for (int e = 0; e < std::max(ready, 0); ++e) {
      const size_t index = events[static_cast<size_t>(e)].data.u64;
      const uint32_t got = events[static_cast<size_t>(e)].events;
      Connection& c = impl.connections[index];
      if (!c.active) {
        impl.Close(c);  // an idle kept-alive connection that the server closed
        continue;
      }
      if (c.connecting) {
        int error = 0;
        socklen_t length = sizeof(error);
        ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) {
          if (Status next = impl.ConnectionAttemptFailed(c, index, std::strerror(error)); !next.ok()) {
            finish(c, index, next.error());
          }
          continue;
        }
        c.connecting = false;
      }
      if (c.sent < c.out.size()) {
        if (Status s = impl.Send(c, index); !s.ok()) lost(c, index, s.error());
        continue;
      }
      if (got & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        if (Status s = impl.Receive(c); !s.ok()) {
          lost(c, index, s.error());
          continue;
        }
        answered(c, index);
      }
    }
    if (Clock::now() >= next_scan) {
      const Clock::time_point at = Clock::now();
      for (size_t index : lanes) {
        Connection& c = impl.connections[index];
        if (!c.active) continue;
        if (c.connecting && at >= c.attempt_deadline) {
          const std::string why = "no connection within " + GeneralText(c.attempt_timeout_s) + " s";
          if (Status next = impl.ConnectionAttemptFailed(c, index, why); !next.ok()) finish(c, index, next.error());
        } else if (at >= c.request_deadline) {
          const HttpCall& call = calls[c.calls[c.next]];
          impl.Close(c);
          finish(c, index,
                 Error::Unavailable("cannot reach " + c.endpoint.base_url + ": " + What(call) +
                                    " had no answer within the timeout (" + GeneralText(c.endpoint.timeout_s) + " s)"));
        }
      }
      next_scan = at + kTimeoutScan;
    }
  }

  // The deadline: what is under way is abandoned, what has not been sent is not sent.
  for (size_t index : lanes) {
    Connection& c = impl.connections[index];
    if (c.active) {
      impl.Close(c);
      c.active = false;
      const size_t k = c.calls[c.next++];
      results[k].emplace(
          Error::DeadlineExceeded(c.endpoint.base_url + ": " + What(calls[k]) + ": no answer by the deadline"));
    }
    for (; c.next < c.calls.size(); ++c.next) {
      const size_t k = c.calls[c.next];
      if (!results[k]) {
        results[k].emplace(Error::DeadlineExceeded(c.endpoint.base_url + ": " + What(calls[k]) +
                                                   ": not sent: the deadline passed first"));
      }
    }
    c.calls.clear();
    c.next = 0;
  }
  std::vector<Result<HttpResponse>> answers;
  answers.reserve(calls.size());
  for (auto& result : results) answers.push_back(std::move(*result));
  return answers;
}

}  // namespace wattcut::http
