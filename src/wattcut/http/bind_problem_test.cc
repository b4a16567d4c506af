#include "wattcut/http/bind_problem.h"

#include <gtest/gtest.h>

#include "wattcut/http/loopback_listener_testing.h"

namespace wattcut::http {
namespace {

TEST(BindProblem, APortInUseIsSaidSoAndAFreeOneHasNone) {
  testing::LoopbackListener listener;
  ASSERT_TRUE(listener.ok());
  const int port = listener.port();
  EXPECT_EQ(BindProblem("127.0.0.1", port), "Address already in use");
  listener.Close();
  EXPECT_EQ(BindProblem("127.0.0.1", port), "");
  EXPECT_FALSE(BindProblem("no-such-host.invalid", 80).empty());
  EXPECT_EQ(BindProblem("192.0.2.1", port), "Cannot assign requested address");  // TEST-NET-1: not ours
}

}  // namespace
}  // namespace wattcut::http
