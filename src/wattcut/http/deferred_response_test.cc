// Deferred responses (deferred_response.h) through a real BoundedHttpServer on 127.0.0.1: a
// request whose answer comes later holds no worker; the answer is written when sent, whoever
// sends it and whenever (before the handler returned, from another thread, large or small);
// the connection then serves its next request or closes as asked; a client gone first runs
// on_gone, and every later Send is refused.
#include "wattcut/http/deferred_response.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "wattcut/http/bounded_http_server.h"
#include "wattcut/http/http_client.h"
#include "wattcut/http/loopback_client_testing.h"
#include "wattcut/http/test_http_server.h"

namespace wattcut::http {
namespace {

using testing::ConnectLoopback;
using testing::GetRequest;
using testing::ReadUntil;
using testing::SendText;
using testing::TestHttpServer;

// The handles the /wait route deferred, in arrival order, and how many clients went away.
struct Parked {
  std::mutex mu;
  std::vector<std::shared_ptr<DeferredResponse>> handles;
  size_t arrived = 0;
  std::atomic<int> gone{0};

  size_t Count() {
    std::lock_guard lock(mu);
    return arrived;
  }
  std::shared_ptr<DeferredResponse> At(size_t i) {
    std::lock_guard lock(mu);
    return handles.at(i);
  }
  // Waits (at most 10 s) until `n` requests are parked.
  bool WaitFor(size_t n) {
    for (int i = 0; i < 1000 && Count() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return Count() >= n;
  }
};

// /wait defers (and, with ?now, answers before its handler returns); /hello answers at once;
// /big defers and is answered with `big_bytes` bytes.
TestHttpServer::Routes ParkingRoutes(Parked& parked) {
  return [&parked](BoundedHttpServer& server) {
    server.Get("/wait", [&parked](const httplib::Request& req, httplib::Response& res) {
      res.set_content("dropped", "text/plain");  // never seen: the answer is deferred
      auto handle = BoundedHttpServer::Defer(req, {[&parked] { ++parked.gone; }});
      if (req.has_param("now")) handle->Send(200, "{\"now\": true}");
      std::lock_guard lock(parked.mu);
      // ?i=N: the Nth handle (requests on several connections arrive in any order).
      const size_t i = req.has_param("i") ? std::stoul(req.get_param_value("i")) : parked.handles.size();
      if (parked.handles.size() <= i) parked.handles.resize(i + 1);
      parked.handles[i] = handle;
      ++parked.arrived;
    });
    server.Get("/hello",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
  };
}

// The length of the first whole response in `got` (headers and a Content-Length body), else 0.
size_t FirstResponseLength(const std::string& got) {
  const size_t end = got.find("\r\n\r\n");
  if (end == std::string::npos) return 0;
  const size_t at = got.find("Content-Length: ");
  const size_t length = at == std::string::npos || at > end ? 0 : std::stoul(got.substr(at + 16));
  return got.size() >= end + 4 + length ? end + 4 + length : 0;
}

// `n` responses from `fd`, in order (they may come in one read), within 10 s; fewer when they
// did not.
std::vector<std::string> ReadResponses(int fd, size_t n) {
  std::vector<std::string> responses;
  std::string got = ReadUntil(fd, [&](const std::string& read) {
    size_t whole = 0;
    for (size_t at = 0, length = 0; whole < n && (length = FirstResponseLength(read.substr(at))) > 0; at += length) {
      ++whole;
    }
    return whole >= n;
  });
  for (size_t length = 0; responses.size() < n && (length = FirstResponseLength(got)) > 0; got.erase(0, length)) {
    responses.push_back(got.substr(0, length));
  }
  return responses;
}

// One response from `fd`; "" when none came within 10 s.
std::string ReadResponse(int fd) {
  std::vector<std::string> one = ReadResponses(fd, 1);
  return one.empty() ? "" : one[0];
}

HttpEndpoint Loopback(const TestHttpServer& served) {
  HttpEndpoint endpoint;
  endpoint.base_url = served.base_url();
  return endpoint;
}

std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

// A server of ParkingRoutes and one connection whose `request` waits for its answer; ok() when it
// does (the test has failed otherwise).
struct OneParked {
  Parked parked;
  std::unique_ptr<TestHttpServer> served;
  int fd = -1;

  explicit OneParked(const std::string& request) : served(TestHttpServer::OnLoopback(ParkingRoutes(parked))) {
    if (served == nullptr) return;
    fd = ConnectLoopback(served->port());
    if (fd < 0) return;
    SendText(fd, request);
    if (!parked.WaitFor(1)) ADD_FAILURE() << "the request did not reach its handler";
  }
  ~OneParked() {
    if (fd >= 0) ::close(fd);
  }
  bool ok() { return fd >= 0 && parked.Count() == 1; }
};

TEST(DeferredResponse, ParkedRequestsHoldNoWorkerAndEachGetsItsAnswer) {
  Parked parked;
  auto served = TestHttpServer::OnLoopback(ParkingRoutes(parked));
  ASSERT_NE(served, nullptr);
  // 64 waiting requests on a server of BoundedHttpServer::kDefaultWorkers (8) workers.
  constexpr int kWaiting = 64;
  std::vector<int> fds;
  for (int i = 0; i < kWaiting; ++i) {
    fds.push_back(ConnectLoopback(served->port()));
    ASSERT_GE(fds.back(), 0);
    SendText(fds.back(), GetRequest("/wait?i=" + std::to_string(i)));
  }
  ASSERT_TRUE(parked.WaitFor(kWaiting)) << parked.Count() << " of " << kWaiting << " parked";
  // Every worker is free: a request of another client is answered while all 64 wait.
  auto client = HttpClient::Create(Loopback(*served));
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto hello = (*client)->Get("/hello");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->body, "hello");
  // Answered from another thread, in reverse order; each connection gets its own.
  std::thread answering([&] {
    for (int i = kWaiting - 1; i >= 0; --i) {
      EXPECT_TRUE(parked.At(static_cast<size_t>(i))->Send(200, "{\"i\": " + std::to_string(i) + "}"));
    }
  });
  answering.join();
  for (int i = 0; i < kWaiting; ++i) {
    const std::string response = ReadResponse(fds[static_cast<size_t>(i)]);
    EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
    EXPECT_NE(response.find("Content-Type: application/json\r\n"), std::string::npos) << response;
    EXPECT_EQ(BodyOf(response), "{\"i\": " + std::to_string(i) + "}");
  }
  // A second Send is refused; the connection serves its next request (keep-alive).
  EXPECT_FALSE(parked.At(0)->Send(500, "{}"));
  SendText(fds[0], GetRequest("/hello"));
  EXPECT_EQ(BodyOf(ReadResponse(fds[0])), "hello");
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(parked.gone.load(), 0);
}

TEST(DeferredResponse, AnAnswerSentBeforeItsHandlerReturnedIsWritten) {
  Parked parked;
  auto served = TestHttpServer::OnLoopback(ParkingRoutes(parked));
  ASSERT_NE(served, nullptr);
  const int fd = ConnectLoopback(served->port());
  ASSERT_GE(fd, 0);
  // Twice on one connection: the second after the first came back to the reactor.
  for (int i = 0; i < 2; ++i) {
    SendText(fd, GetRequest("/wait?now"));
    const std::string response = ReadResponse(fd);
    EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
    EXPECT_EQ(BodyOf(response), "{\"now\": true}");
  }
  ::close(fd);
}

TEST(DeferredResponse, APipelinedRequestIsServedAfterTheDeferredAnswer) {
  OneParked one(GetRequest("/wait") + GetRequest("/hello"));
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(one.parked.At(0)->Send(202, "{\"first\": 1}"));
  const std::vector<std::string> both = ReadResponses(one.fd, 2);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(BodyOf(both[0]), "{\"first\": 1}");
  EXPECT_EQ(BodyOf(both[1]), "hello");
}

TEST(DeferredResponse, ConnectionCloseIsHonouredAfterTheDeferredAnswer) {
  OneParked one(GetRequest("/wait", "Connection: close\r\n"));
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(one.parked.At(0)->Send(503, "{\"error\": \"stopping\"}"));
  const std::string response = ReadResponse(one.fd);
  EXPECT_EQ(response.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos) << response;
  char byte = 0;
  EXPECT_EQ(::recv(one.fd, &byte, 1, 0), 0) << "the server closes the connection after the answer";
}

TEST(DeferredResponse, AnAnswerLargerThanTheSocketBufferIsWrittenAsTheClientReads) {
  OneParked one(GetRequest("/wait"));
  ASSERT_TRUE(one.ok());
  std::string big(16 << 20, 'x');  // far more than a loopback socket buffer
  ASSERT_TRUE(one.parked.At(0)->Send(200, big, "text/plain"));
  // Meanwhile the reactor (it waits for the socket to drain) serves everyone else.
  auto client = HttpClient::Create(Loopback(*one.served));
  ASSERT_TRUE(client.ok());
  auto hello = (*client)->Get("/hello");
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  const std::string response = ReadResponse(one.fd);
  EXPECT_EQ(BodyOf(response).size(), big.size());
  EXPECT_EQ(BodyOf(response), big);
}

TEST(DeferredResponse, AClientGoneFirstRunsOnGoneAndLaterSendsAreRefused) {
  OneParked one(GetRequest("/wait"));
  ASSERT_TRUE(one.ok());
  ::close(std::exchange(one.fd, -1));
  for (int i = 0; i < 1000 && one.parked.gone.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(one.parked.gone.load(), 1);
  EXPECT_FALSE(one.parked.At(0)->Send(200, "{}"));
}

TEST(DeferredResponse, ASendAfterTheServerStoppedIsRefused) {
  OneParked one(GetRequest("/wait"));
  ASSERT_TRUE(one.ok());
  one.served.reset();  // the server stops: the waiting connection is closed, on_gone is not run
  EXPECT_FALSE(one.parked.At(0)->Send(200, "{}"));
  EXPECT_EQ(ReadResponse(one.fd), "");
  EXPECT_EQ(one.parked.gone.load(), 0);
}

TEST(DeferredResponse, TheBytesOfAResponse) {
  EXPECT_EQ(ResponseBytes(200, "{}", "application/json", false, false),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(ResponseBytes(504, "{}", "application/json", true, true),
            "HTTP/1.1 504 Gateway Timeout\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: "
            "close\r\n\r\n");
}

}  // namespace
}  // namespace wattcut::http
