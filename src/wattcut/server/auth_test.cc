#include "wattcut/server/auth.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

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
