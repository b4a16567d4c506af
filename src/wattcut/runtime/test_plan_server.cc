#include "wattcut/runtime/test_plan_server.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace wattcut::testing {

TestPlanServer::TestPlanServer() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wattcut-client-test-XXXXXX").string();
  data_dir_ = ::mkdtemp(pattern.data()) ? pattern : "";
  server::ServerOptions options;
  options.port = 0;
  options.data_dir = data_dir_;
  options.sync = server::SyncMode::kNormal;
  auto created = server::Server::Create(options);
  if (!created) {
    ADD_FAILURE() << "cannot start the test server: " << created.error().message;
    std::abort();
  }
  server_ = std::move(*created);
  thread_ = std::thread([this] { server_->Run(); });
}

TestPlanServer::~TestPlanServer() {
  server_->Stop();
  thread_.join();
  server_.reset();
  std::error_code ignored;
  if (!data_dir_.empty()) std::filesystem::remove_all(data_dir_, ignored);
}

}  // namespace wattcut::testing
