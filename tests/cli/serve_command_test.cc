// `wattcut serve` as an operator starts it.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/command_runner.h"
#include "wattcut/http/loopback_listener_testing.h"

namespace wattcut::testing {
namespace {

// Issue 54: a second server on a busy port said "cannot bind 127.0.0.1:7787" and nothing more.
TEST(ServeCommand, ABusyPortIsRefusedWithTheReasonAndWhatToDo) {
  http::testing::LoopbackListener listener;
  ASSERT_TRUE(listener.ok());
  const std::string port = std::to_string(listener.port());
  TempDir dir;
  CommandResult r = RunWattcut("serve --data-dir " + dir.path() + "/data --listen 127.0.0.1:" + port);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot bind 127.0.0.1:" + port + ": Address already in use (another wattcut serve"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--listen HOST:PORT picks another"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattcut::testing
