#include "wattcut/http/test_http_server.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

namespace wattcut::http::testing {

TempSocketDir::TempSocketDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wcsock-XXXXXX").string();
  path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
  EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
}

TempSocketDir::~TempSocketDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

TestHttpServer::TestHttpServer() : server_(ConnectionLimits{}, BoundedHttpServer::Observer{}) {}

std::unique_ptr<TestHttpServer> TestHttpServer::OnUnixSocket(const std::string& socket_path, const Routes& routes,
                                                             unsigned mode) {
  std::unique_ptr<TestHttpServer> served(new TestHttpServer());
  routes(served->server_);
  std::string error;
  if (!served->server_.BindUnixSocket(socket_path, mode, "", error)) {
    ADD_FAILURE() << "cannot bind " << socket_path << ": " << error;
    return nullptr;
  }
  served->socket_path_ = socket_path;
  served->Serve();
  return served;
}

std::unique_ptr<TestHttpServer> TestHttpServer::OnLoopback(const Routes& routes) {
  std::unique_ptr<TestHttpServer> served(new TestHttpServer());
  routes(served->server_);
  served->port_ = served->server_.bind_to_any_port("127.0.0.1");
  if (served->port_ <= 0) {
    ADD_FAILURE() << "cannot bind a 127.0.0.1 port";
    return nullptr;
  }
  served->Serve();
  return served;
}

void TestHttpServer::Serve() {
  thread_ = std::thread([this] { server_.listen_after_bind(); });
}

std::string TestHttpServer::base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

TestHttpServer::~TestHttpServer() {
  // stop() does nothing before the serving thread has started listening: wait for it (bounded).
  for (int i = 0; i < 1000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace wattcut::http::testing
