// For the client's tests: a real planning server (wattcut::server::Server) in this process, on a
// free loopback port, with its own temporary data folder; stopped and removed on destruction.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "wattcut/server/server.h"

namespace wattcut::testing {

class TestPlanServer {
 public:
  TestPlanServer();
  ~TestPlanServer();
  TestPlanServer(const TestPlanServer&) = delete;
  TestPlanServer& operator=(const TestPlanServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

 private:
  std::string data_dir_;
  std::unique_ptr<server::Server> server_;
  std::thread thread_;
};

}  // namespace wattcut::testing
