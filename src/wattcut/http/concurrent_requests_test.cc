// ConcurrentRequests against real BoundedHttpServers on 127.0.0.1: every call's answer comes back in
// the order given, an endpoint's calls run in order, connections are kept from one run to the next
// (and one the server closed is replaced without a failure), and every failure is that call's value
// (nobody listening, a slow answer past the timeout or the deadline, an answer over the size limit)
// while the other calls are answered.
#include "wattcut/http/concurrent_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "wattcut/http/bounded_http_server.h"
#include "wattcut/http/test_http_server.h"

namespace wattcut::http {
namespace {

using testing::Gate;
using ::testing::HasSubstr;
using testing::TestHttpServer;

// What one server saw: each request's body and connection, in arrival order.
struct Seen {
  std::mutex mutex;
  std::vector<std::string> bodies;
  std::vector<uint64_t> connections;
  std::atomic<int> slow_entered{0};
};

TestHttpServer::Routes Routes(Seen& seen, Gate* gate = nullptr) {
  return [&seen, gate](BoundedHttpServer& server) {
    server.set_keep_alive_max_count(100);
    server.Put("/echo", [&seen](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(seen.mutex);
      seen.bodies.push_back(req.body);
      const ConnectionInfo* connection = BoundedHttpServer::CurrentConnection();
      seen.connections.push_back(connection != nullptr ? connection->id : 0);
      res.set_content(req.body + " " + req.get_header_value("Authorization"), "text/plain");
    });
    server.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content(R"({"error":"no such thing","code":"not_found"})", "application/json");
    });
    server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1000, 'x'), "text/plain");
    });
    server.Get("/slow", [&seen, gate](const httplib::Request&, httplib::Response& res) {
      ++seen.slow_entered;
      if (gate != nullptr) gate->Wait();
      res.set_content("late", "text/plain");
    });
  };
}

HttpEndpoint Endpoint(const std::string& base_url, const std::string& token = "", size_t max_response_bytes = 1 << 20) {
  HttpEndpoint endpoint;
  endpoint.base_url = base_url;
  endpoint.bearer_token = token;
  endpoint.max_response_bytes = max_response_bytes;
  return endpoint;
}

std::unique_ptr<ConcurrentRequests> Requests(std::vector<HttpEndpoint> endpoints) {
  auto made = ConcurrentRequests::Create(std::move(endpoints));
  EXPECT_TRUE(made.ok()) << made.error().message;
  return made.ok() ? std::move(made).value() : nullptr;
}

ConcurrentRequests::Clock::time_point Later(double seconds) {
  return ConcurrentRequests::Clock::now() +
         std::chrono::duration_cast<ConcurrentRequests::Clock::duration>(std::chrono::duration<double>(seconds));
}

int ClosedPort() {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(Routes(seen));
  return served != nullptr ? served->port() : 1;
}

TEST(ConcurrentRequests, AnswersEveryCallInOrderAndAClientsCallsOneAfterTheOther) {
  Seen seen_a, seen_b;
  auto a = TestHttpServer::OnLoopback(Routes(seen_a));
  auto b = TestHttpServer::OnLoopback(Routes(seen_b));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto requests = Requests({Endpoint(a->base_url() + "/", "token-a"), Endpoint(b->base_url())});
  EXPECT_EQ(requests->size(), 2u);
  EXPECT_EQ(requests->description(0), a->base_url());

  std::vector<HttpCall> calls;
  for (int i = 0; i < 5; ++i) {
    calls.push_back({0, "PUT", "/echo", "a" + std::to_string(i)});
    calls.push_back({1, "PUT", "/echo", "b" + std::to_string(i)});
  }
  calls.push_back({1, "GET", "/missing", ""});
  for (int run = 0; run < 2; ++run) {
    std::vector<Result<HttpResponse>> answers = requests->Run(calls, Later(60));
    ASSERT_EQ(answers.size(), calls.size());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(answers[2 * i].ok()) << answers[2 * i].error().message;
      EXPECT_EQ(answers[2 * i]->status, 200);
      EXPECT_EQ(answers[2 * i]->body, "a" + std::to_string(i) + " Bearer token-a");
      ASSERT_TRUE(answers[2 * i + 1].ok()) << answers[2 * i + 1].error().message;
      EXPECT_EQ(answers[2 * i + 1]->body, "b" + std::to_string(i) + " ");
    }
    ASSERT_TRUE(answers.back().ok());
    EXPECT_EQ(answers.back()->status, 404);
    EXPECT_EQ(answers.back()->content_type, "application/json");
  }
  std::lock_guard lock(seen_a.mutex);
  EXPECT_EQ(seen_a.bodies, (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4", "a0", "a1", "a2", "a3", "a4"}));
  // One connection per client, kept from the first run to the second.
  ASSERT_EQ(seen_a.connections.size(), 10u);
  for (uint64_t connection : seen_a.connections)
    EXPECT_EQ(connection, seen_a.connections[0]) << ::testing::PrintToString(seen_a.connections);
}

// (Fewer endpoints than the test server has threads: each keep-alive connection holds one.)
TEST(ConcurrentRequests, SeveralEndpointsAtOnceOnOneThread) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(Routes(seen));
  ASSERT_NE(served, nullptr);
  std::vector<HttpEndpoint> endpoints;
  std::vector<HttpCall> calls;
  for (size_t i = 0; i < 6; ++i) {
    endpoints.push_back(Endpoint(served->base_url()));
    calls.push_back({i, "PUT", "/echo", std::to_string(i)});
  }
  auto requests = Requests(endpoints);
  std::vector<Result<HttpResponse>> answers = requests->Run(calls, Later(60));
  ASSERT_EQ(answers.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].error().message;
    EXPECT_EQ(answers[i]->body, std::to_string(i) + " ");
  }
}

TEST(ConcurrentRequests, EachFailureIsItsCallsValueAndTheOthersAreAnswered) {
  Seen seen;
  Gate gate;
  auto served = TestHttpServer::OnLoopback(Routes(seen, &gate));
  ASSERT_NE(served, nullptr);
  const std::string nowhere = "http://127.0.0.1:" + std::to_string(ClosedPort());
  enum { kGood, kSmall, kSlow, kDead };
  auto requests = Requests({Endpoint(served->base_url()), Endpoint(served->base_url(), "", 100),
                            Endpoint(served->base_url()), Endpoint(nowhere)});

  std::vector<HttpCall> calls = {
      {kSlow, "GET", "/slow", ""},   {kDead, "PUT", "/echo", "x"},     {kSmall, "GET", "/big", ""},
      {kGood, "PUT", "/echo", "ok"}, {kSlow, "PUT", "/echo", "after"}, {7, "GET", "/x", ""},
  };
  // Long enough for everything but the held answer (a machine may be slow), then the Run returns.
  std::vector<Result<HttpResponse>> answers = requests->Run(calls, Later(2));
  gate.Open();
  ASSERT_EQ(answers.size(), 6u);
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(answers[0].error().message, served->base_url() + ": GET /slow: no answer by the deadline");
  ASSERT_FALSE(answers[1].ok());
  EXPECT_EQ(answers[1].error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(answers[1].error().message, HasSubstr("cannot reach " + nowhere + ": "));
  ASSERT_FALSE(answers[2].ok());
  EXPECT_EQ(answers[2].error().code, ErrorCode::kMalformed);
  EXPECT_EQ(answers[2].error().message, served->base_url() + ": the answer to GET /big is larger than 100 bytes");
  ASSERT_TRUE(answers[3].ok()) << answers[3].error().message;
  EXPECT_EQ(answers[3]->body, "ok ");
  ASSERT_FALSE(answers[4].ok());
  EXPECT_EQ(answers[4].error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(answers[4].error().message, served->base_url() + ": PUT /echo: not sent: the deadline passed first");
  ASSERT_FALSE(answers[5].ok());
  EXPECT_EQ(answers[5].error().message, "call 5 (GET /x) names endpoint 7 of 4");

  // The abandoned endpoint is asked again, on a new connection.
  std::vector<Result<HttpResponse>> again = requests->Run({{kSlow, "PUT", "/echo", "again"}}, Later(60));
  ASSERT_TRUE(again[0].ok()) << again[0].error().message;
  EXPECT_EQ(again[0]->body, "again ");
}

TEST(ConcurrentRequests, AnAnswerSlowerThanTheTimeoutIsUnavailableNotAHang) {
  Seen seen;
  Gate gate;
  auto served = TestHttpServer::OnLoopback(Routes(seen, &gate));
  ASSERT_NE(served, nullptr);
  HttpEndpoint endpoint = Endpoint(served->base_url());
  endpoint.timeout_s = 0.3;
  auto requests = Requests({endpoint});
  auto answers = requests->Run({{0, "GET", "/slow", ""}, {0, "PUT", "/echo", "next"}}, Later(60));
  gate.Open();
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(answers[0].error().message,
            "cannot reach " + served->base_url() + ": GET /slow had no answer within the timeout (0.3 s)");
  // The next call goes out on a new connection.
  ASSERT_TRUE(answers[1].ok()) << answers[1].error().message;
  EXPECT_EQ(answers[1]->body, "next ");
}

// A server that closes a connection after its answer says so (Connection: close); one that closes
// an idle kept-alive connection says nothing, and the request sent on it meets a closed socket. The
// next request goes out on a new connection either way, without an error.
TEST(ConcurrentRequests, AConnectionTheServerClosedIsReplaced) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback([&seen](BoundedHttpServer& server) {
    Routes(seen)(server);
    server.set_keep_alive_max_count(2);  // "Connection: close" on every second answer
    server.set_keep_alive_timeout(1);    // an idle connection closed silently after 1 s
  });
  ASSERT_NE(served, nullptr);
  auto requests = Requests({Endpoint(served->base_url())});
  for (int i = 0; i < 5; ++i) {
    if (i == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the idle timeout
    auto answers = requests->Run({{0, "PUT", "/echo", std::to_string(i)}}, Later(60));
    ASSERT_TRUE(answers[0].ok()) << i << ": " << answers[0].error().message;
    EXPECT_EQ(answers[0]->body, std::to_string(i) + " ");
  }
  std::lock_guard lock(seen.mutex);
  // 0 and 1 on the first connection, 2 on a second, idle past its timeout: 3 and 4 on a third.
  ASSERT_EQ(seen.connections.size(), 5u);
  EXPECT_EQ(seen.connections[1], seen.connections[0]);
  EXPECT_NE(seen.connections[2], seen.connections[1]);
  EXPECT_NE(seen.connections[3], seen.connections[2]);
  EXPECT_EQ(seen.connections[4], seen.connections[3]);
}

TEST(ConcurrentRequests, EndpointsArePlainHttpUrls) {
  for (const auto& [url, problem] : std::vector<std::pair<std::string, std::string>>{
           {"https://10.0.0.1:7788", "expected http://HOST[:PORT] (plain HTTP over TCP)"},
           {"http://", "no host"},
           {"http://host:0", "expected a port 1..65535"},
           {"http://host:99999", "expected a port 1..65535"},
           {"http://[::1", "an IPv6 address without its ']'"},
       }) {
    auto made = ConcurrentRequests::Create({Endpoint(url)});
    ASSERT_FALSE(made.ok()) << url;
    EXPECT_EQ(made.error().code, ErrorCode::kInvalidArgument);
    EXPECT_THAT(made.error().message, HasSubstr(problem)) << url;
  }
  HttpEndpoint unix_socket;
  unix_socket.unix_socket = "/run/wattcut/agent.sock";
  EXPECT_FALSE(ConcurrentRequests::Create({unix_socket}).ok());
  EXPECT_TRUE(ConcurrentRequests::Create({Endpoint("http://[::1]:7788/prefix/"), Endpoint("http://gpu-a01")}).ok());
}

// The host goes through ResolveHost when no resolver is given. A name's addresses are the
// machine's /etc/hosts and DNS (Debian's maps "localhost" to ::1 and 127.0.0.1), so the tests of
// names below inject theirs, and this one names the address it means.
TEST(ConcurrentRequests, WithoutAResolverTheHostIsResolvedByResolveHost) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(Routes(seen));
  ASSERT_NE(served, nullptr);
  auto requests = Requests({Endpoint("http://127.0.0.1:" + std::to_string(served->port()))});
  auto answers = requests->Run({{0, "PUT", "/echo", "by name"}}, Later(60));
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().message;
  EXPECT_EQ(answers[0]->body, "by name ");
}

// A resolver that answers every host with `addresses` (numeric, so no /etc/hosts is read), each an
// address and its port, and counts its look-ups in `lookups` when given.
HostResolver Resolving(const std::vector<std::pair<std::string, int>>& addresses,
                       std::shared_ptr<std::atomic<int>> lookups = nullptr) {
  return [addresses, lookups](const std::string&, const std::string&) -> Result<std::vector<SocketAddress>> {
    if (lookups != nullptr) ++*lookups;
    std::vector<SocketAddress> all;
    for (const auto& [address, port] : addresses) {
      auto one = ResolveHost(address, std::to_string(port));
      if (!one.ok()) return one.error();
      all.insert(all.end(), one->begin(), one->end());
    }
    return all;
  };
}

std::unique_ptr<ConcurrentRequests> RequestsResolving(const std::string& base_url, const HostResolver& resolver,
                                                      double connect_timeout_s = 2.0) {
  HttpEndpoint endpoint = Endpoint(base_url);
  endpoint.connect_timeout_s = connect_timeout_s;
  auto made = ConcurrentRequests::Create({endpoint}, resolver);
  EXPECT_TRUE(made.ok()) << made.error().message;
  return made.ok() ? std::move(made).value() : nullptr;
}

// The served port is taken on 127.0.0.1 only: at ::1 and 127.0.0.2 (loopback too) it refuses, as
// a host name's IPv6 address refuses when the service listens on IPv4 alone.
TEST(ConcurrentRequests, ANameWhoseFirstAddressesRefuseIsReachedAtTheOneThatAnswers) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(Routes(seen));
  ASSERT_NE(served, nullptr);
  const int port = served->port();
  auto lookups = std::make_shared<std::atomic<int>>(0);
  auto requests = RequestsResolving("http://gpu-a01:" + std::to_string(port),
                                    Resolving({{"::1", port}, {"127.0.0.2", port}, {"127.0.0.1", port}}, lookups));
  ASSERT_NE(requests, nullptr);
  auto answers = requests->Run({{0, "PUT", "/echo", "third address"}, {0, "PUT", "/echo", "kept alive"}}, Later(60));
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().message;
  EXPECT_EQ(answers[0]->body, "third address ");
  ASSERT_TRUE(answers[1].ok()) << answers[1].error().message;
  EXPECT_EQ(*lookups, 1) << "the connection that answered is kept";
  std::lock_guard lock(seen.mutex);
  ASSERT_EQ(seen.connections.size(), 2u);
  EXPECT_EQ(seen.connections[0], seen.connections[1]);
}

TEST(ConcurrentRequests, WhenEveryAddressRefusesTheErrorNamesEachAndWhy) {
  const int closed = ClosedPort();
  const std::string port = std::to_string(closed);
  auto requests =
      RequestsResolving("http://gpu-a01:" + port, Resolving({{"127.0.0.2", closed}, {"127.0.0.1", closed}}));
  ASSERT_NE(requests, nullptr);
  auto answers = requests->Run({{0, "GET", "/missing", ""}}, Later(60));
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(answers[0].error().message, "cannot reach http://gpu-a01:" + port + ": 127.0.0.2:" + port +
                                            ": Connection refused; 127.0.0.1:" + port + ": Connection refused");
}

// A listening socket whose accept queue is full and that never accepts: the kernel drops new
// connection requests, so a connect to it neither succeeds nor refuses (an address that drops
// packets), all on loopback.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(at);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0 || ::listen(fd_, 0) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&at), &length) != 0) {
      return;
    }
    port_ = ntohs(at.sin_port);
    // Fill the queue: each of these completes its handshake and is never accepted.
    for (int i = 0; i < 2; ++i) {
      const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      ::connect(client, reinterpret_cast<sockaddr*>(&at), sizeof(at));
      fillers_.push_back(client);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // lets the handshakes land
  }
  ~SilentListener() {
    for (int fd : fillers_) ::close(fd);
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> fillers_;
};

TEST(ConcurrentRequests, AnAddressThatDoesNotAnswerGivesWayToTheNextWithinTheConnectTimeout) {
  SilentListener silent;
  ASSERT_NE(silent.port(), 0);
  Seen seen;
  auto served = TestHttpServer::OnLoopback(Routes(seen));
  ASSERT_NE(served, nullptr);
  // Two ports stand for one name's two addresses: the silent one first.
  auto requests =
      RequestsResolving("http://gpu-a01:1", Resolving({{"127.0.0.1", silent.port()}, {"127.0.0.1", served->port()}}),
                        /*connect_timeout_s=*/1.0);
  ASSERT_NE(requests, nullptr);
  auto answers = requests->Run({{0, "PUT", "/echo", "second address"}}, Later(60));
  ASSERT_TRUE(answers[0].ok()) << answers[0].error().message;
  EXPECT_EQ(answers[0]->body, "second address ");

  // Alone, it is the call's error, with the address and the time it had.
  auto stuck =
      RequestsResolving("http://gpu-a02:1", Resolving({{"127.0.0.1", silent.port()}}), /*connect_timeout_s=*/0.2);
  ASSERT_NE(stuck, nullptr);
  auto timed_out = stuck->Run({{0, "GET", "/missing", ""}}, Later(60));
  ASSERT_FALSE(timed_out[0].ok());
  EXPECT_EQ(timed_out[0].error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(timed_out[0].error().message, "cannot reach http://gpu-a02:1: 127.0.0.1:" + std::to_string(silent.port()) +
                                              ": no connection within 0.2 s");
}

TEST(ConcurrentRequests, AHostThatDoesNotResolveIsThatCallsError) {
  HostResolver nothing = [](const std::string& host, const std::string&) -> Result<std::vector<SocketAddress>> {
    return Error::Unavailable("cannot resolve host '" + host + "': Name or service not known");
  };
  auto requests = RequestsResolving("http://gpu-b07:7788", nothing);
  ASSERT_NE(requests, nullptr);
  auto answers = requests->Run({{0, "GET", "/missing", ""}}, Later(60));
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().message,
            "cannot reach http://gpu-b07:7788: cannot resolve host 'gpu-b07': Name or service not known");
}

}  // namespace
}  // namespace wattcut::http
