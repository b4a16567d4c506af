// Periodic streams (periodic_streams.h) through a real BoundedHttpServer on 127.0.0.1: pieces
// every period in chunked encoding, ended by the producer or by the server's stop with the last
// chunk; 64 open streams hold none of the 8 workers; a client gone or one that does not read
// ends its stream, and its producer is destroyed.
#include "wattcut/http/periodic_streams.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/http/bounded_http_server.h"
#include "wattcut/http/connection_reactor.h"
#include "wattcut/http/http_client.h"
#include "wattcut/http/loopback_client_testing.h"
#include "wattcut/http/test_http_server.h"

namespace wattcut::http {
namespace {

using std::chrono::milliseconds;
using testing::ConnectLoopback;
using testing::GetRequest;
using testing::ReadUntil;
using testing::SendText;
using testing::TestHttpServer;

// The producers' state: alive while a stream's producer is.
struct Producers {
  std::shared_ptr<int> token = std::make_shared<int>(0);
  // Until no producer holds the token (bounded: 10,000 naps of 1 ms).
  bool AllGone() {
    for (int nap = 0; nap < 10000 && token.use_count() > 1; ++nap) std::this_thread::sleep_for(milliseconds(1));
    return token.use_count() == 1;
  }
};

// /lines?n=N: "line 0\n" ... every 5 ms, the last one ends the stream (N = 0: never ends);
// /flood: 256 KiB every ms, never ending; /hello: at once.
TestHttpServer::Routes StreamRoutes(Producers& producers) {
  return [&producers](BoundedHttpServer& server) {
    server.Get("/lines", [&producers](const httplib::Request& req, httplib::Response&) {
      const int n = std::stoi(req.get_param_value("n"));
      auto sent = std::make_shared<int>(0);
      BoundedHttpServer::StreamEvery(req, 200, "text/plain", {{"Cache-Control", "no-cache"}}, milliseconds(5),
                                     [n, sent, token = producers.token] {
                                       const int i = (*sent)++;
                                       return StreamPiece{"line " + std::to_string(i) + "\n", n > 0 && i + 1 >= n};
                                     });
    });
    server.Get("/flood", [&producers](const httplib::Request& req, httplib::Response&) {
      BoundedHttpServer::StreamEvery(req, 200, "text/plain", {}, milliseconds(1),
                                     [token = producers.token] { return StreamPiece{std::string(256 << 10, 'x')}; });
    });
    server.Get("/hello",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
  };
}

void Ask(int fd, const std::string& path) { SendText(fd, GetRequest(path)); }

bool EndsWithLastChunk(const std::string& got) {
  return got.size() >= 5 && got.compare(got.size() - 5, 5, "0\r\n\r\n") == 0;
}

// The body of a chunked response (its head and chunk sizes removed).
std::string Dechunk(const std::string& response) {
  size_t at = response.find("\r\n\r\n");
  if (at == std::string::npos) return "";
  at += 4;
  std::string body;
  while (at < response.size()) {
    const size_t line_end = response.find("\r\n", at);
    if (line_end == std::string::npos) break;
    const size_t size = std::stoul(response.substr(at, line_end - at), nullptr, 16);
    if (size == 0) break;
    body += response.substr(line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
  return body;
}

TEST(PeriodicStreams, PiecesComeEveryPeriodAndTheLastEndsTheStream) {
  Producers producers;
  auto served = TestHttpServer::OnLoopback(StreamRoutes(producers));
  ASSERT_NE(served, nullptr);
  const int fd = ConnectLoopback(served->port());
  ASSERT_GE(fd, 0);
  Ask(fd, "/lines?n=5");
  const std::string response = ReadUntil(fd, EndsWithLastChunk);
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << response;
  EXPECT_NE(response.find("Cache-Control: no-cache\r\n"), std::string::npos) << response;
  EXPECT_EQ(Dechunk(response), "line 0\nline 1\nline 2\nline 3\nline 4\n");
  EXPECT_TRUE(producers.AllGone());
  // The connection serves its next request.
  Ask(fd, "/hello");
  EXPECT_NE(ReadUntil(fd, [](const std::string& got) { return got.find("hello") != std::string::npos; }).find("hello"),
            std::string::npos);
  ::close(fd);
}

TEST(PeriodicStreams, OpenStreamsHoldNoWorker) {
  Producers producers;
  auto served = TestHttpServer::OnLoopback(StreamRoutes(producers));
  ASSERT_NE(served, nullptr);
  // 64 never-ending streams on a server of 8 workers, each with its first pieces read.
  std::vector<int> fds;
  for (int i = 0; i < 64; ++i) {
    fds.push_back(ConnectLoopback(served->port()));
    ASSERT_GE(fds.back(), 0);
    Ask(fds.back(), "/lines?n=0");
  }
  for (int fd : fds) {
    EXPECT_NE(ReadUntil(fd, [](const std::string& got) { return got.find("line 1\n") != std::string::npos; })
                  .find("line 1\n"),
              std::string::npos);
  }
  HttpEndpoint endpoint;
  endpoint.base_url = served->base_url();
  auto client = HttpClient::Create(endpoint);
  ASSERT_TRUE(client.ok());
  auto hello = (*client)->Get("/hello");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->body, "hello");
  // Their clients go: every producer is destroyed.
  for (int fd : fds) ::close(fd);
  EXPECT_TRUE(producers.AllGone()) << producers.token.use_count() - 1 << " producers left";
}

TEST(PeriodicStreams, AClientThatDoesNotReadIsCutOff) {
  Producers producers;
  auto served = TestHttpServer::OnLoopback(StreamRoutes(producers));
  ASSERT_NE(served, nullptr);
  const int fd = ConnectLoopback(served->port());
  ASSERT_GE(fd, 0);
  Ask(fd, "/flood");
  // Never read: past what the socket buffers hold and DeferredResponse::kMaxUnsentStreamBytes
  // waiting, the stream is over and its producer destroyed.
  EXPECT_TRUE(producers.AllGone());
  // What was written, then the end of the connection (not the stream's last chunk).
  const std::string got = ReadUntil(fd, [](const std::string&) { return false; });  // until it ends
  pollfd p{fd, POLLIN, 0};
  char byte = 0;
  const bool ended = ::poll(&p, 1, 0) > 0 && ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_TRUE(ended) << "the server closes the connection of a stream it cut off";
  EXPECT_FALSE(EndsWithLastChunk(got));
  ::close(fd);
}

TEST(PeriodicStreams, TheServersStopEndsEveryStreamWithItsLastChunk) {
  Producers producers;
  auto served = TestHttpServer::OnLoopback(StreamRoutes(producers));
  ASSERT_NE(served, nullptr);
  const int fd = ConnectLoopback(served->port());
  ASSERT_GE(fd, 0);
  Ask(fd, "/lines?n=0");
  ReadUntil(fd, [](const std::string& got) { return got.find("line 0\n") != std::string::npos; });
  served.reset();
  EXPECT_TRUE(EndsWithLastChunk(ReadUntil(fd, EndsWithLastChunk)));
  EXPECT_TRUE(producers.AllGone());
  ::close(fd);
}

TEST(PeriodicStreams, AStreamAddedAfterStopIsEndedAtOnce) {
  PeriodicStreams streams;
  streams.Stop();
  auto response = std::make_shared<DeferredResponse>(std::make_shared<ReactorMailbox>(), -1, false,
                                                     DeferredResponse::Ends{}, nullptr);
  EXPECT_TRUE(response->StartStream(200, "text/plain"));
  EXPECT_EQ(streams.Add(response, milliseconds(1), [] { return StreamPiece{"x"}; }), 0u);
  EXPECT_TRUE(response->over());
  EXPECT_EQ(streams.size(), 0u);
}

}  // namespace
}  // namespace wattcut::http
