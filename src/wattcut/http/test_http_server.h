// For tests: a real BoundedHttpServer served on a thread, on a Unix socket in a fresh temporary
// folder or on an ephemeral 127.0.0.1 port, stopped (and its folder removed) by the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "wattcut/http/bounded_http_server.h"

namespace wattcut::http::testing {

// A fresh folder under the temporary directory (short: a socket path has at most 107 bytes),
// removed with its contents by the destructor.
class TempSocketDir {
 public:
  TempSocketDir();
  ~TempSocketDir();
  TempSocketDir(const TempSocketDir&) = delete;
  TempSocketDir& operator=(const TempSocketDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Socket(const std::string& name = "test.sock") const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A handler that waits until the test lets it go (at most 10 s, so a broken test cannot hang).
class Gate {
 public:
  void Wait() {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::seconds(10), [this] { return open_; });
  }
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

class TestHttpServer {
 public:
  using Routes = std::function<void(BoundedHttpServer&)>;

  // Binds `socket_path` with `mode`, or fails the test and returns null.
  static std::unique_ptr<TestHttpServer> OnUnixSocket(const std::string& socket_path, const Routes& routes,
                                                      unsigned mode = 0600);
  static std::unique_ptr<TestHttpServer> OnLoopback(const Routes& routes);
  ~TestHttpServer();

  BoundedHttpServer& server() { return server_; }
  int port() const { return port_; }                               // TCP: the bound port
  std::string base_url() const;                                    // TCP: "http://127.0.0.1:PORT"
  const std::string& socket_path() const { return socket_path_; }  // Unix socket

 private:
  TestHttpServer();
  void Serve();

  BoundedHttpServer server_;
  std::thread thread_;
  int port_ = 0;
  std::string socket_path_;
};

}  // namespace wattcut::http::testing
