#include "wattcut/http/loopback.h"

#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

TEST(Loopback, Hosts) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_TRUE(IsLoopbackHost("127.255.255.254"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_TRUE(IsLoopbackHost("LocalHost"));
  // Names are whatever DNS says they are: only numeric addresses and "localhost" count.
  EXPECT_FALSE(IsLoopbackHost("127.evil.example"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.1.evil.example"));
  EXPECT_FALSE(IsLoopbackHost("localhost.evil.example"));
  EXPECT_FALSE(IsLoopbackHost("127.1"));
  EXPECT_FALSE(IsLoopbackHost("127.0.0.256"));
  EXPECT_FALSE(IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost(""));
  EXPECT_FALSE(IsLoopbackHost("[::2]"));
}

}  // namespace
}  // namespace wattcut::http
