#include "wattcut/http/bearer_token.h"

#include <gtest/gtest.h>

namespace wattcut::http {
namespace {

TEST(BearerToken, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret2"));
  EXPECT_FALSE(ConstantTimeEquals("", "x"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(BearerToken, Credentials) {
  EXPECT_EQ(BearerCredentials("Bearer tok"), "tok");
  EXPECT_EQ(BearerCredentials("bEaReR   tok \t"), "tok");
  EXPECT_FALSE(BearerCredentials("Basic tok").has_value());
  EXPECT_FALSE(BearerCredentials("Bearer").has_value());
  EXPECT_FALSE(BearerCredentials("Bearertok").has_value());
  EXPECT_FALSE(BearerCredentials("").has_value());
}

}  // namespace
}  // namespace wattcut::http
