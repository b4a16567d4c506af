// `wattcut serve` as an operator starts it.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "tests/cli/command_runner.h"

namespace wattcut::testing {
namespace {

// Issue 54: a second server on a busy port said "cannot bind 127.0.0.1:7787" and nothing more.
TEST(ServeCommand, ABusyPortIsRefusedWithTheReasonAndWhatToDo) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  TempDir dir;
  CommandResult r = RunWattcut("serve --data-dir " + dir.path() + "/data --listen 127.0.0.1:" + port);
  close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot bind 127.0.0.1:" + port + ": Address already in use (another wattcut serve"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--listen HOST:PORT picks another"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattcut::testing
