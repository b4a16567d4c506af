#include "wattcut/base/json_object.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(JsonObject, AKeyGivenTwiceInAnyObjectIsMalformed) {
  EXPECT_TRUE(ParseJsonWithoutDuplicateKeys(R"({"a": 1, "b": {"a": 2}})").ok()) << "the same key in two objects";
  for (const char* text : {R"({"lease_s": 30, "lease_s": 0})", R"({"x": {"y": 1, "y": 2}})", R"([{"k": 1, "k": 1}])"}) {
    auto parsed = ParseJsonWithoutDuplicateKeys(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kMalformed);
    EXPECT_NE(parsed.error().message.find("appears twice"), std::string::npos) << parsed.error().message;
  }
  auto garbage = ParseJsonWithoutDuplicateKeys("{\"a\": \x7f}");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(garbage.error().message.find('\x7f'), std::string::npos) << "control bytes are escaped";
}

TEST(JsonObject, AFieldTheRequestDoesNotKnowIsRefusedByName) {
  const nlohmann::json target = {{"peak_power_per_gpu_w", 300}, {"lease", 30}};
  EXPECT_TRUE(RefuseUnknownFields(target, {"peak_power_per_gpu_w", "lease"}).ok());
  Status refused = RefuseUnknownFields(target, {"peak_power_per_gpu_w", "lease_s"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message, "unknown field 'lease'; expected only peak_power_per_gpu_w, lease_s");
}

}  // namespace
}  // namespace wattcut
