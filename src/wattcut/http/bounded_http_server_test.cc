// The server's Unix socket: a socket file left by a dead process is replaced, one a live process
// listens on is not, the file gets the mode asked for and is removed when serving ends, and with
// mode 0600 another user cannot connect at all (the file's mode is the socket's access control).
#include "wattcut/http/bounded_http_server.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "wattcut/http/http_client.h"
#include "wattcut/http/test_http_server.h"

namespace wattcut::http {
namespace {

using testing::TempSocketDir;
using testing::TestHttpServer;

TestHttpServer::Routes HelloRoutes() {
  return [](BoundedHttpServer& server) {
    server.Get("/hello",
               [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
  };
}

Result<HttpResponse> GetHello(const std::string& socket_path) {
  HttpEndpoint endpoint;
  endpoint.unix_socket = socket_path;
  auto client = HttpClient::Create(endpoint);
  if (!client.ok()) return client.error();
  return (*client)->Get("/hello");
}

sockaddr_un Address(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  return address;
}

bool Exists(const std::string& path) {
  struct stat file {};
  return ::lstat(path.c_str(), &file) == 0;
}

TEST(BoundedHttpServerUnixSocket, AStaleSocketFileIsReplaced) {
  TempSocketDir dir;
  const std::string path = dir.Socket("agent.sock");
  {  // what an agent killed with SIGKILL leaves: the file, nobody listening
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address = Address(path);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << std::strerror(errno);
    ::close(fd);
  }
  ASSERT_TRUE(Exists(path));
  auto served = TestHttpServer::OnUnixSocket(path, HelloRoutes());
  ASSERT_NE(served, nullptr);
  auto hello = GetHello(path);
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->body, "hello");
}

TEST(BoundedHttpServerUnixSocket, ALiveSocketIsRefusedAndKeepsServing) {
  TempSocketDir dir;
  const std::string path = dir.Socket("agent.sock");
  auto first = TestHttpServer::OnUnixSocket(path, HelloRoutes());
  ASSERT_NE(first, nullptr);
  BoundedHttpServer second(ConnectionLimits{}, BoundedHttpServer::Observer{});
  std::string error;
  EXPECT_FALSE(second.BindUnixSocket(path, 0600, "", error));
  EXPECT_EQ(error, "another process listens on " + path + " (a second agent?): stop it first");
  auto hello = GetHello(path);  // the first one still answers on its file
  ASSERT_TRUE(hello.ok()) << hello.error().message;
  EXPECT_EQ(hello->body, "hello");
}

TEST(BoundedHttpServerUnixSocket, RefusesAPathThatIsNotASocketOrTooLong) {
  TempSocketDir dir;
  const std::string file = dir.Socket("plain-file");
  std::ofstream(file) << "not a socket";
  BoundedHttpServer server(ConnectionLimits{}, BoundedHttpServer::Observer{});
  std::string error;
  EXPECT_FALSE(server.BindUnixSocket(file, 0600, "", error));
  EXPECT_EQ(error, file + " exists and is not a socket: remove it or choose another --socket");
  EXPECT_TRUE(Exists(file));  // left alone
  EXPECT_FALSE(server.BindUnixSocket(dir.path() + "/" + std::string(200, 's'), 0600, "", error));
  EXPECT_NE(error.find("' must be 1 to 107 bytes"), std::string::npos) << error;
  EXPECT_FALSE(server.BindUnixSocket(dir.Socket(), 0600, "no-such-group-wattcut", error));
  EXPECT_EQ(error, "--socket-group: no group named 'no-such-group-wattcut'");
}

TEST(BoundedHttpServerUnixSocket, TheModeAndGroupAreAppliedAndTheFileIsRemovedAtTheEnd) {
  TempSocketDir dir;
  const std::string path = dir.Socket("agent.sock");
  for (unsigned mode : {0660u, 0600u, 0666u}) {
    {
      std::unique_ptr<TestHttpServer> served = TestHttpServer::OnUnixSocket(path, HelloRoutes(), mode);
      ASSERT_NE(served, nullptr);
      struct stat file {};
      ASSERT_EQ(::stat(path.c_str(), &file), 0);
      EXPECT_TRUE(S_ISSOCK(file.st_mode));
      EXPECT_EQ(file.st_mode & 07777, mode) << std::oct << (file.st_mode & 07777);
    }
    EXPECT_FALSE(Exists(path)) << "mode " << std::oct << mode;
  }
  // A group by number (this process's own, so that chown is allowed for any user).
  const gid_t gid = ::getgid();
  BoundedHttpServer server(ConnectionLimits{}, BoundedHttpServer::Observer{});
  std::string error;
  ASSERT_TRUE(server.BindUnixSocket(path, 0660, std::to_string(gid), error)) << error;
  struct stat file {};
  ASSERT_EQ(::stat(path.c_str(), &file), 0);
  EXPECT_EQ(file.st_gid, gid);
}

// connect() to `path` from a child process running as uid/gid 65534 (nobody): 0, or its errno.
int ConnectAsNobody(const std::string& path) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      ::_exit(200);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address = Address(path);
    const int connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::_exit(connected == 0 ? 0 : (errno & 0x7f));
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BoundedHttpServerUnixSocket, WithMode0600AnotherUserCannotConnect) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a child as uid 65534";
  TempSocketDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);  // the folder does not stop nobody: only the socket's mode
  const std::string path = dir.Socket("agent.sock");
  {
    auto open_to_all = TestHttpServer::OnUnixSocket(path, HelloRoutes(), 0666);
    ASSERT_NE(open_to_all, nullptr);
    EXPECT_EQ(ConnectAsNobody(path), 0);  // the same child connects where the mode lets it
  }
  auto owner_only = TestHttpServer::OnUnixSocket(path, HelloRoutes(), 0600);
  ASSERT_NE(owner_only, nullptr);
  EXPECT_EQ(ConnectAsNobody(path), EACCES);
  auto hello = GetHello(path);  // root (the owner) still connects
  ASSERT_TRUE(hello.ok()) << hello.error().message;
}

}  // namespace
}  // namespace wattcut::http

namespace wattcut::http {
namespace {

// A raw TCP connection to 127.0.0.1:port; -1 when it cannot connect.
int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  timeval timeout{5, 0};  // a read never waits longer: a broken server cannot hang the test
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Sends a GET of `path` and reads until the whole answer, headers and its body `body`, arrived;
// what was read ("" when the server had closed the connection).
std::string Ask(int fd, const std::string& path, const std::string& body) {
  const std::string expected = "\r\n\r\n" + body;  // the body after the headers, not a header's "text/plain"
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) return "";
  std::string got;
  char buffer[4096];
  while (got.find(expected) == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
  }
  return got;
}

// The keep-alive timeout closes idle connections, but not one a handler asked to keep open (the
// agent's zeusd clients: their leases end when they close, not when they are quiet).
TEST(BoundedHttpServerKeepAlive, AConnectionAskedToStayOpenIsNotClosedForBeingIdle) {
  auto server = TestHttpServer::OnLoopback([](BoundedHttpServer& s) {
    s.set_keep_alive_timeout(1);
    s.Get("/keep", [](const httplib::Request&, httplib::Response& res) {
      BoundedHttpServer::KeepOpenWhileIdle();
      res.set_content("kept", "text/plain");
    });
    s.Get("/plain", [](const httplib::Request&, httplib::Response& res) { res.set_content("plain", "text/plain"); });
  });
  ASSERT_NE(server, nullptr);
  const int kept = ConnectLoopback(server->port());
  const int plain = ConnectLoopback(server->port());
  ASSERT_GE(kept, 0);
  ASSERT_GE(plain, 0);
  EXPECT_NE(Ask(kept, "/keep", "kept").find("\r\n\r\nkept"), std::string::npos);
  EXPECT_NE(Ask(plain, "/plain", "plain").find("\r\n\r\nplain"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // idle past the 1 s timeout
  char byte;
  EXPECT_EQ(::recv(plain, &byte, 1, 0), 0) << "an idle connection is closed after the keep-alive timeout";
  EXPECT_NE(Ask(kept, "/plain", "plain").find("200 OK"), std::string::npos) << "the kept one still answers";
  ::close(kept);
  ::close(plain);
}

// A header line longer than cpp-httplib reads (a 30 kB token) is answered 431 with the reason,
// and the connection is closed at once. Before: "400 bad request: GET /path" with no reason, the
// connection kept open despite "Connection: close", and an unasked 408 thirty seconds later.
TEST(BoundedHttpServerHeaders, AHeaderLineLongerThanTheServerReadsIsRefusedWithItsReasonAndClosed) {
  auto server = TestHttpServer::OnLoopback(HelloRoutes());
  ASSERT_NE(server, nullptr);
  const int fd = ConnectLoopback(server->port());
  ASSERT_GE(fd, 0);
  const std::string request = "GET /hello HTTP/1.1\r\nHost: test\r\nConnection: close\r\nAuthorization: Bearer " +
                              std::string(30000, 't') + "\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string got;
  char buffer[4096];
  for (;;) {  // until the server closes (each read waits at most 5 s: ConnectLoopback)
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) {
      EXPECT_EQ(n, 0) << "closed, not timed out";
      break;
    }
    got.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  EXPECT_EQ(got.rfind("HTTP/1.1 431", 0), 0u) << got.substr(0, 200);
  EXPECT_NE(got.find("a header line is longer than 8190 bytes"), std::string::npos) << got;
  // Just under the line bound it is served.
  const int ok = ConnectLoopback(server->port());
  ASSERT_GE(ok, 0);
  const std::string fits = "GET /hello HTTP/1.1\r\nHost: test\r\nX-Token: " + std::string(8000, 't') + "\r\n\r\n";
  ASSERT_EQ(::send(ok, fits.data(), fits.size(), MSG_NOSIGNAL), static_cast<ssize_t>(fits.size()));
  std::string answer;
  while (answer.find("\r\n\r\nhello") == std::string::npos) {
    const ssize_t n = ::recv(ok, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  ::close(ok);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer.substr(0, 200);
}

}  // namespace
}  // namespace wattcut::http
