#include "wattcut/base/json_text_check.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

using Kind = JsonTextProblem::Kind;

TEST(JsonTextCheck, ValidJsonHasNoProblem) {
  EXPECT_FALSE(FindJsonTextProblem(R"({"a": [1, {"a": 2}, {"a": 3}], "b": {"a": null}})").has_value());
}

TEST(JsonTextCheck, TheFirstRepeatedKeyIsFoundWithItsPath) {
  auto p = FindJsonTextProblem(R"({"operations": [{"name": "F0"}, {"name": "F1", "options": [], "name": "F2"}]})");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, Kind::kDuplicateKey);
  EXPECT_EQ(p->path, "operations[1].name");
  EXPECT_EQ(p->key, "name");
}

std::string Nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<size_t>(depth), '[') + inner + std::string(static_cast<size_t>(depth), ']');
}

TEST(JsonTextCheck, NestingDeeperThanTheBoundIsRefusedWithItsPath) {
  EXPECT_FALSE(FindJsonTextProblem(Nested(kJsonMaxDepth)).has_value());
  EXPECT_FALSE(FindJsonTextProblem("{\"a\":" + Nested(kJsonMaxDepth - 1) + "}").has_value());
  for (const std::string& text :
       {Nested(kJsonMaxDepth + 1), "{\"a\":" + Nested(kJsonMaxDepth) + "}", "{\"v\":" + Nested(100000) + "}"}) {
    auto p = FindJsonTextProblem(text);
    ASSERT_TRUE(p.has_value()) << text.size();
    EXPECT_EQ(p->kind, Kind::kTooDeep);
    EXPECT_EQ(p->limit, kJsonMaxDepth);
    const std::string message = JsonDepthMessage(*p);
    EXPECT_EQ(message.rfind("arrays and objects nested deeper than 128 levels (at ", 0), 0u) << message;
    EXPECT_LT(message.size(), 160u) << "the path is cut";
  }
  auto object = FindJsonTextProblem("{\"data\":{\"result\":[" + Nested(200) + "]}}");
  ASSERT_TRUE(object.has_value());
  EXPECT_EQ(object->path.rfind("data.result[0][0][0]", 0), 0u) << object->path;
  // Objects count as arrays do.
  std::string objects;
  for (int i = 0; i <= kJsonMaxDepth; ++i) objects += "{\"k\":";
  objects += "1" + std::string(kJsonMaxDepth + 1, '}');
  ASSERT_TRUE(FindJsonTextProblem(objects).has_value());
  EXPECT_EQ(FindJsonTextProblem(objects)->kind, Kind::kTooDeep);
}

TEST(JsonTextCheck, ASyntaxErrorOrANumberBeyondADoubleSaysWhere) {
  const std::string text = "{\n  \"unit_time_s\": 1e400\n}";
  auto p = FindJsonTextProblem(text);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, Kind::kSyntax);
  EXPECT_NE(p->message.find("number overflow"), std::string::npos) << p->message;
  EXPECT_EQ(LineAndColumn(text, p->byte), "line 2, column 22") << p->byte;
  EXPECT_EQ(p->path, "unit_time_s");
  auto cut = FindJsonTextProblem("{\"a\": [1, 2");
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->kind, Kind::kSyntax);
}

TEST(JsonTextCheck, ATopLevelArrayPastItsBoundIsRefusedAtTheElementPastIt) {
  const std::map<std::string, int64_t> limits = {{"edges", 2}};
  EXPECT_FALSE(FindJsonTextProblem(R"({"edges": [[1, 2], [2, 3]], "x": [1, 2, 3]})", limits).has_value());
  auto p = FindJsonTextProblem(R"({"edges": [[1, 2], [2, 3], [3, 4], garbage never read)", limits);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, Kind::kTooManyElements);
  EXPECT_EQ(p->path, "edges");
  EXPECT_EQ(p->limit, 2);
  EXPECT_FALSE(FindJsonTextProblem(R"({"a": {"edges": [1, 2, 3]}})", limits).has_value()) << "top level only";
}

}  // namespace
}  // namespace wattcut
