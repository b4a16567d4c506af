#include "wattcut/base/json_preview.h"

#include <gtest/gtest.h>

#include <string>

#include "wattcut/base/json_object.h"
#include "wattcut/base/json_text_check.h"

namespace wattcut {
namespace {

using nlohmann::json;

TEST(JsonPreview, AShortValueIsItsJsonText) {
  const json value = json::parse(R"({"a":[1,2.5,"x\"y",null,true],"b":{}})");
  EXPECT_EQ(JsonPreview(value, 80), value.dump());
  EXPECT_EQ(JsonTypeAndPreview(json::parse("[1,2]")), "array [1,2]");
  EXPECT_EQ(JsonTypeAndPreview(json("ok")), "string \"ok\"");
}

TEST(JsonPreview, ALongValueIsCutAndItsControlBytesEscaped) {
  const std::string preview = JsonPreview(json(std::string(1000, '7')), 20);
  EXPECT_EQ(preview, "\"" + std::string(19, '7') + "...");
  EXPECT_EQ(JsonPreview(json("a\x1b[2Jb"), 40), "\"a\\u001b[2Jb\"");
  // A 50 MB string costs a copy of its first bytes, not of all of it.
  const json huge(std::string(50u << 20, 'x'));
  EXPECT_EQ(JsonPreview(huge, 10), "\"" + std::string(9, 'x') + "...");
  json wide = json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(i);
  EXPECT_EQ(JsonPreview(wide, 12), "[0,1,2,3,4,5...");
}

TEST(JsonPreview, AValueNestedDeeperThanTheBoundIsShownToItsBound) {
  // nlohmann parses any depth (without recursion) but dumps with one: 100,000 levels of dump()
  // overflowed the stack of every reader whose error message quoted such a value.
  const int depth = 100000;
  const json deep = json::parse(std::string(depth, '[') + std::string(depth, ']'));
  const std::string preview = JsonPreview(deep, 300);
  EXPECT_EQ(preview, std::string(kJsonMaxDepth, '[') + "..." + std::string(kJsonMaxDepth, ']'));
  EXPECT_EQ(JsonTypeAndPreview(deep, 3), "array [[[...");
}

TEST(JsonPreview, TextNestedDeeperThanTheBoundIsNeverADocument) {
  const int depth = 100000;
  const std::string text = std::string(depth, '[') + std::string(depth, ']');
  EXPECT_TRUE(ParseJsonOrDiscarded(text).is_discarded());
  Result<json> strict = ParseJsonWithoutDuplicateKeys(text);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message.find("malformed JSON: arrays and objects nested deeper than 128 levels"),
            std::string::npos)
      << strict.error().message;
  EXPECT_EQ(ParseJsonOrDiscarded(R"({"a":1,"a":2})")["a"], 2) << "a repeated key keeps its last value, as before";
  EXPECT_TRUE(ParseJsonOrDiscarded("{").is_discarded());
  EXPECT_EQ(ParseJsonOrDiscarded(std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']')).dump().size(),
            2u * kJsonMaxDepth);
}

}  // namespace
}  // namespace wattcut
