#include "wattcut/http/bind_problem.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace wattcut::http {
namespace {

TEST(BindProblem, APortInUseIsSaidSoAndAFreeOneHasNone) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int port = ntohs(address.sin_port);
  EXPECT_EQ(BindProblem("127.0.0.1", port), "Address already in use");
  close(fd);
  EXPECT_EQ(BindProblem("127.0.0.1", port), "");
  EXPECT_FALSE(BindProblem("no-such-host.invalid", 80).empty());
  EXPECT_EQ(BindProblem("192.0.2.1", port), "Cannot assign requested address");  // TEST-NET-1: not ours
}

}  // namespace
}  // namespace wattcut::http
