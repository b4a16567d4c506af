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
  // The scheme is case-insensitive (RFC 7235); the token is not.
  EXPECT_FALSE(policy.CheckAuthorization("bearer tok").has_value());
  EXPECT_FALSE(policy.CheckAuthorization("BEARER tok").has_value());
  EXPECT_FALSE(policy.CheckAuthorization("Bearer   tok").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("Bearer TOK").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("Bearertok").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("Basic tok").has_value());
  EXPECT_TRUE(policy.CheckAuthorization("Bearer ").has_value());
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
