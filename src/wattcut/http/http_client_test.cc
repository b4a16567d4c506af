// The HTTP client against a real BoundedHttpServer, on a Unix socket and on 127.0.0.1: what the
// service answers passes through, the bearer token arrives, one connection serves every request
// (and the server sees this process's credentials on it), and every failure is a value: nothing
// listening, no socket file, a handler slower than the timeout, a stalled or stopped stream.
#include "wattcut/http/http_client.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "wattcut/http/test_http_server.h"

namespace wattcut::http {
namespace {

using testing::Gate;
using testing::TempSocketDir;
using testing::TestHttpServer;

// What the handlers saw of each request.
struct Seen {
  std::mutex mutex;
  std::vector<uint64_t> connection_ids;
  std::vector<int> pids;
  std::vector<int> uids;
  std::vector<std::string> authorizations;
  std::vector<std::string> peer_addresses;

  void Note(const httplib::Request& req) {
    std::lock_guard lock(mutex);
    const ConnectionInfo* connection = BoundedHttpServer::CurrentConnection();
    connection_ids.push_back(connection != nullptr ? connection->id : 0);
    pids.push_back(connection != nullptr ? connection->pid : -1);
    uids.push_back(connection != nullptr ? connection->uid : -1);
    peer_addresses.push_back(connection != nullptr ? connection->peer_address : "");
    authorizations.push_back(req.get_header_value("Authorization"));
  }
};

TestHttpServer::Routes EchoRoutes(Seen& seen) {
  return [&seen](BoundedHttpServer& server) {
    server.Get("/hello", [&seen](const httplib::Request& req, httplib::Response& res) {
      seen.Note(req);
      res.set_content("hello", "text/plain");
    });
    server.Get("/missing", [&seen](const httplib::Request& req, httplib::Response& res) {
      seen.Note(req);
      res.status = 404;
      res.set_content(R"({"error":"no such thing","code":"not_found"})", "application/json");
    });
    auto echo = [&seen](const httplib::Request& req, httplib::Response& res) {
      seen.Note(req);
      res.status = 201;
      res.set_content(req.method + " " + req.path + " [" + req.get_header_value("Content-Type") + "] " + req.body,
                      "text/plain");
    };
    server.Post("/echo", echo);
    server.Put("/echo", echo);
    server.Delete("/echo", echo);
  };
}

std::unique_ptr<HttpClient> Client(HttpEndpoint endpoint) {
  auto client = HttpClient::Create(std::move(endpoint));
  EXPECT_TRUE(client.ok()) << client.error().message;
  return client.ok() ? std::move(client).value() : nullptr;
}

HttpEndpoint UnixEndpoint(const std::string& path) {
  HttpEndpoint endpoint;
  endpoint.unix_socket = path;
  return endpoint;
}

HttpEndpoint TcpEndpoint(const TestHttpServer& served) {
  HttpEndpoint endpoint;
  endpoint.base_url = served.base_url() + "/";  // a trailing slash is not doubled
  return endpoint;
}

// Every method and status, over `client`.
void ExpectStatusesAndBodiesPassThrough(HttpClient& client) {
  auto hello = client.Get("/hello");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->status, 200);
  EXPECT_EQ(hello->body, "hello");
  EXPECT_EQ(hello->content_type, "text/plain");

  auto missing = client.Get("/missing");
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, R"({"error":"no such thing","code":"not_found"})");
  EXPECT_EQ(missing->content_type, "application/json");

  auto unrouted = client.Get("/nowhere");
  ASSERT_TRUE(unrouted.ok());
  EXPECT_EQ(unrouted->status, 404);

  auto post = client.Request("POST", "/echo", R"({"gpus":[0]})");
  ASSERT_TRUE(post.ok()) << post.error().message;
  EXPECT_EQ(post->status, 201);
  EXPECT_EQ(post->body, R"(POST /echo [application/json] {"gpus":[0]})");
  auto empty_post = client.Request("POST", "/echo");  // a renew: a POST without a body
  ASSERT_TRUE(empty_post.ok()) << empty_post.error().message;
  EXPECT_EQ(empty_post->body, "POST /echo [application/json] ");
  auto put = client.Request("PUT", "/echo", R"({"min_mhz":1200})");
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->body, R"(PUT /echo [application/json] {"min_mhz":1200})");
  auto del = client.Request("DELETE", "/echo");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->body, "DELETE /echo [] ");
}

TEST(HttpClient, StatusesAndBodiesPassThroughOnAUnixSocket) {
  TempSocketDir dir;
  Seen seen;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), EchoRoutes(seen));
  ASSERT_NE(served, nullptr);
  auto client = Client(UnixEndpoint(dir.Socket()));
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->description(), "unix:" + dir.Socket());
  ExpectStatusesAndBodiesPassThrough(*client);
}

TEST(HttpClient, StatusesAndBodiesPassThroughOnLoopbackTcp) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(EchoRoutes(seen));
  ASSERT_NE(served, nullptr);
  auto client = Client(TcpEndpoint(*served));
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->description(), served->base_url());
  ExpectStatusesAndBodiesPassThrough(*client);
  std::lock_guard lock(seen.mutex);
  ASSERT_FALSE(seen.peer_addresses.empty());
  EXPECT_EQ(seen.peer_addresses.front(), "127.0.0.1");
}

TEST(HttpClient, TheBearerTokenArrivesOnEveryRequest) {
  TempSocketDir dir;
  Seen seen;
  auto unix_served = TestHttpServer::OnUnixSocket(dir.Socket(), EchoRoutes(seen));
  auto tcp_served = TestHttpServer::OnLoopback(EchoRoutes(seen));
  ASSERT_NE(unix_served, nullptr);
  ASSERT_NE(tcp_served, nullptr);
  HttpEndpoint over_unix = UnixEndpoint(dir.Socket());
  over_unix.bearer_token = "3f9c-train";
  HttpEndpoint over_tcp = TcpEndpoint(*tcp_served);
  over_tcp.bearer_token = "3f9c-train";
  for (HttpEndpoint* endpoint : {&over_unix, &over_tcp}) {
    auto client = Client(*endpoint);
    ASSERT_NE(client, nullptr);
    ASSERT_TRUE(client->Get("/hello").ok());
    ASSERT_TRUE(client->Request("PUT", "/echo", "{}").ok());
  }
  auto anonymous = Client(UnixEndpoint(dir.Socket()));
  ASSERT_TRUE(anonymous->Get("/hello").ok());
  std::lock_guard lock(seen.mutex);
  EXPECT_EQ(seen.authorizations, (std::vector<std::string>{"Bearer 3f9c-train", "Bearer 3f9c-train",
                                                           "Bearer 3f9c-train", "Bearer 3f9c-train", ""}));
}

TEST(HttpClient, ThreeRequestsReuseOneConnectionAndTheServerSeesThisProcess) {
  TempSocketDir dir;
  Seen seen;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), EchoRoutes(seen));
  ASSERT_NE(served, nullptr);
  auto client = Client(UnixEndpoint(dir.Socket()));
  ASSERT_TRUE(client->Get("/hello").ok());
  ASSERT_TRUE(client->Request("POST", "/echo", "{}").ok());
  ASSERT_TRUE(client->Get("/missing").ok());  // a 404 does not close it either
  std::lock_guard lock(seen.mutex);
  ASSERT_EQ(seen.connection_ids.size(), 3u);
  EXPECT_NE(seen.connection_ids[0], 0u);
  EXPECT_EQ(seen.connection_ids[1], seen.connection_ids[0]);
  EXPECT_EQ(seen.connection_ids[2], seen.connection_ids[0]);
  EXPECT_EQ(seen.pids, (std::vector<int>{getpid(), getpid(), getpid()}));
  EXPECT_EQ(seen.uids, (std::vector<int>(3, static_cast<int>(getuid()))));
}

TEST(HttpClient, ThreeRequestsReuseOneTcpConnection) {
  Seen seen;
  auto served = TestHttpServer::OnLoopback(EchoRoutes(seen));
  ASSERT_NE(served, nullptr);
  auto client = Client(TcpEndpoint(*served));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->Get("/hello").ok());
  std::lock_guard lock(seen.mutex);
  ASSERT_EQ(seen.connection_ids.size(), 3u);
  EXPECT_EQ(seen.connection_ids[1], seen.connection_ids[0]);
  EXPECT_EQ(seen.connection_ids[2], seen.connection_ids[0]);
}

TEST(HttpClient, CallsFromSeveralThreadsAreSerialisedOnOneClient) {
  TempSocketDir dir;
  Seen seen;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), EchoRoutes(seen));
  ASSERT_NE(served, nullptr);
  auto client = Client(UnixEndpoint(dir.Socket()));
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&client, &good, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string body = std::to_string(t) + "-" + std::to_string(i);
        auto answer = client->Request("POST", "/echo", body);
        if (answer.ok() && answer->body == "POST /echo [application/json] " + body) ++good;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good.load(), 80);
}

// A socket file with nobody listening on it: what an agent killed with SIGKILL leaves behind.
void BindWithoutListening(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << std::strerror(errno);
  ::close(fd);
}

TEST(HttpClient, NobodyListeningIsUnavailableAndNamesTheSocket) {
  TempSocketDir dir;
  const std::string path = dir.Socket("agent.sock");
  auto client = Client(UnixEndpoint(path));
  ASSERT_NE(client, nullptr);

  auto no_file = client->Get("/v1/gpus");
  ASSERT_FALSE(no_file.ok());
  EXPECT_EQ(no_file.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(no_file.error().message, "cannot reach unix:" + path + ": no socket file there (is the agent running?)");

  BindWithoutListening(path);
  auto refused = client->Get("/v1/gpus");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().message,
            "cannot reach unix:" + path +
                ": Connection refused (nobody listens on the socket: a stopped agent left it behind?)");
}

TEST(HttpClient, ARefusedTcpConnectionIsUnavailable) {
  // A port that was just free: bound, then closed.
  int port = 0;
  {
    Seen seen;
    auto served = TestHttpServer::OnLoopback(EchoRoutes(seen));
    ASSERT_NE(served, nullptr);
    port = served->port();
  }
  HttpEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:" + std::to_string(port);
  auto client = Client(endpoint);
  auto refused = client->Get("/hello");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().message.rfind("cannot reach " + endpoint.base_url + ": ", 0), 0u)
      << refused.error().message;
}

TEST(HttpClient, AHandlerSlowerThanTheTimeoutIsAnErrorNotAHang) {
  TempSocketDir dir;
  Gate gate;
  Seen seen;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), [&](BoundedHttpServer& server) {
    EchoRoutes(seen)(server);
    server.Get("/slow", [&gate](const httplib::Request&, httplib::Response& res) {
      gate.Wait();
      res.set_content("late", "text/plain");
    });
  });
  ASSERT_NE(served, nullptr);
  HttpEndpoint endpoint = UnixEndpoint(dir.Socket());
  endpoint.timeout_s = 0.3;
  auto client = Client(endpoint);
  auto slow = client->Get("/slow");
  gate.Open();
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(slow.error().message.find("GET /slow had no answer within the timeout"), std::string::npos)
      << slow.error().message;
  // The client goes on, on a new connection.
  auto hello = client->Get("/hello");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->body, "hello");
}

// A chunked NDJSON stream of `lines` lines, each in its own chunk; `written` counts the lines the
// provider got out (it stops when the client has gone).
TestHttpServer::Routes StreamRoutes(int lines, std::atomic<int>& written, std::atomic<bool>& provider_done) {
  return [lines, &written, &provider_done](BoundedHttpServer& server) {
    server.Get("/stream", [lines, &written, &provider_done](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider(
          "application/x-ndjson",
          [lines, &written](size_t, httplib::DataSink& sink) {
            const int n = written.load();
            if (n >= lines) {
              sink.write("{\"last\":true}", 13);  // a last line without '\n'
              sink.done();
              return true;
            }
            const std::string line = "{\"n\":" + std::to_string(n) + "}\n";
            if (!sink.write(line.data(), line.size())) return false;
            ++written;
            return true;
          },
          [&provider_done](bool) { provider_done = true; });
    });
    server.Get("/refused", [](const httplib::Request&, httplib::Response& res) {
      res.status = 422;
      res.set_content(R"({"error":"interval_s: expected 0.01-60 s","code":"invalid_argument"})", "application/json");
    });
  };
}

TEST(HttpClient, StreamLinesDeliversEveryLineOfAChunkedResponse) {
  TempSocketDir dir;
  std::atomic<int> written{0};
  std::atomic<bool> done{false};
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), StreamRoutes(5, written, done));
  ASSERT_NE(served, nullptr);
  auto client = Client(UnixEndpoint(dir.Socket()));
  std::vector<std::string> lines;
  auto streamed = client->StreamLines("/stream", [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  });
  ASSERT_TRUE(streamed.ok()) << streamed.error().message;
  EXPECT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->body, "");
  EXPECT_EQ(streamed->content_type, "application/x-ndjson");
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"n\":0}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}",
                                             "{\"last\":true}"}));

  auto refused = client->StreamLines("/refused", [&](std::string_view) {
    ADD_FAILURE() << "a refused stream has no lines";
    return true;
  });
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_EQ(refused->status, 422);
  EXPECT_EQ(refused->body, R"({"error":"interval_s: expected 0.01-60 s","code":"invalid_argument"})");
}

TEST(HttpClient, StreamLinesStopsWhenTheCallerHasEnough) {
  TempSocketDir dir;
  std::atomic<int> written{0};
  std::atomic<bool> done{false};
  // A stream far longer than anyone reads (bounded, so that a broken test still ends).
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), StreamRoutes(1000000, written, done));
  ASSERT_NE(served, nullptr);
  auto client = Client(UnixEndpoint(dir.Socket()));
  std::vector<std::string> lines;
  auto streamed = client->StreamLines("/stream", [&](std::string_view line) {
    lines.emplace_back(line);
    return lines.size() < 3;
  });
  ASSERT_TRUE(streamed.ok()) << streamed.error().message;
  EXPECT_EQ(streamed->status, 200);
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"n\":0}", "{\"n\":1}", "{\"n\":2}"}));
  // The server's provider sees the client gone and stops (before its million lines).
  for (int i = 0; i < 1000 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(done.load());
  EXPECT_LT(written.load(), 1000000);
  // The client goes on with a new connection.
  lines.clear();
  auto again = client->StreamLines("/stream", [&](std::string_view line) {
    lines.emplace_back(line);
    return false;
  });
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(lines.size(), 1u);
}

TEST(HttpClient, AStalledStreamEndsWithDeadlineExceeded) {
  TempSocketDir dir;
  Gate gate;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), [&gate](BoundedHttpServer& server) {
    server.Get("/stall", [&gate](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/x-ndjson",
                                       [&gate, sent = false](size_t, httplib::DataSink& sink) mutable {
                                         if (!sent) {
                                           sent = true;
                                           return sink.write("{\"n\":0}\n", 8);
                                         }
                                         gate.Wait();  // then nothing, until the test is over
                                         sink.done();
                                         return true;
                                       });
    });
  });
  ASSERT_NE(served, nullptr);
  HttpEndpoint endpoint = UnixEndpoint(dir.Socket());
  endpoint.timeout_s = 0.2;
  auto client = Client(endpoint);
  int lines = 0;
  auto stalled = client->StreamLines("/stall", [&](std::string_view) {
    ++lines;
    return true;
  });
  gate.Open();
  ASSERT_FALSE(stalled.ok());
  EXPECT_EQ(stalled.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(stalled.error().message, "unix:" + dir.Socket() + ": the stream GET /stall stalled: nothing for 0.2 s");
  EXPECT_EQ(lines, 1);
}

TEST(HttpClient, AnAnswerLargerThanTheLimitIsRefused) {
  TempSocketDir dir;
  auto served = TestHttpServer::OnUnixSocket(dir.Socket(), [](BoundedHttpServer& server) {
    server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(1000, 'x'), "text/plain");
    });
  });
  ASSERT_NE(served, nullptr);
  HttpEndpoint endpoint = UnixEndpoint(dir.Socket());
  endpoint.max_response_bytes = 100;
  auto client = Client(endpoint);
  auto big = client->Get("/big");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(big.error().message, "unix:" + dir.Socket() + ": the answer to GET /big is larger than 100 bytes");
}

TEST(HttpClient, AnEndpointIsOneSocketOrOneHttpUrl) {
  EXPECT_EQ(HttpClient::Create({}).error().message,
            "an HTTP endpoint is a Unix socket path or a base URL, exactly one of the two");
  HttpEndpoint both;
  both.unix_socket = "/tmp/a.sock";
  both.base_url = "http://127.0.0.1:1";
  EXPECT_FALSE(HttpClient::Create(both).ok());
  HttpEndpoint ftp;
  ftp.base_url = "ftp://bmc/redfish";
  auto refused = HttpClient::Create(ftp);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message, "base URL 'ftp://bmc/redfish' must start with http:// or https://");
  HttpEndpoint no_time = UnixEndpoint("/tmp/a.sock");
  no_time.timeout_s = 0;
  EXPECT_FALSE(HttpClient::Create(no_time).ok());
}

}  // namespace
}  // namespace wattcut::http
