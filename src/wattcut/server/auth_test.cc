#include "wattcut/server/auth.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

TEST(Auth, LoopbackHosts) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST(Auth, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(Auth, BearerToken) {
  AccessPolicy policy(std::string("tok"), true);
  EXPECT_FALSE(policy.CheckAuthorization("Bearer tok").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("Bearer tok2").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("tok").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("").has_value());
  AccessPolicy open(std::nullopt, true);
  EXPECT_FALSE(open.CheckAuthorization("").has_value());
}

TEST(Auth, FrequencyChangesNeedATokenBeyondLoopback) {
  EXPECT_FALSE(AccessPolicy(std::nullopt, true).CheckFrequencyChange().has_value());
  EXPECT_TRUE(AccessPolicy(std::nullopt, false).CheckFrequencyChange().has_value());
  EXPECT_FALSE(AccessPolicy(std::string("t"), false).CheckFrequencyChange().has_value());
}

}  // namespace
}  // namespace wattcut::server
