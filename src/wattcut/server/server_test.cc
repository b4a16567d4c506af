#include "wattcut/server/server.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <thread>

namespace wattcut::server {
namespace {

// Stop() can arrive before Run() has started listening (a test that makes no request, a signal
// right at start-up); Run() must still return. The race is between Run() and Stop(), not the
// HTTP pool: each server has 4 threads, not the default's 1,000-odd (starting those was nearly
// all of this test's 11 s).
TEST(Server, StopRightAfterRunBeginsAlwaysEndsRun) {
  std::string dir = (std::filesystem::temp_directory_path() / "wattcut-server-stop-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  for (int i = 0; i < 50; ++i) {
    ServerOptions options;
    options.port = 0;
    options.data_dir = dir;
    options.sync = SyncMode::kNormal;
    options.http_threads = 4;
    auto server = Server::Create(options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    std::thread run([&] { EXPECT_TRUE((*server)->Run()); });
    if (i % 2 == 0) std::this_thread::yield();
    (*server)->Stop();
    run.join();
  }
  // Stop before Run: Run returns at once.
  ServerOptions options;
  options.port = 0;
  options.data_dir = dir;
  auto server = Server::Create(options);
  ASSERT_TRUE(server.ok());
  (*server)->Stop();
  EXPECT_TRUE((*server)->Run());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut::server
