#include "wattcut/base/json_field.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace wattcut {
namespace {

using nlohmann::json;
using Got = JsonFieldWording::Got;
using Missing = JsonFieldWording::Missing;

constexpr JsonFieldReader kTypes{JsonFieldWording{}};
constexpr JsonFieldReader kArticles{
    JsonFieldWording{Got::kTypeWithArticle, Missing::kExpectedMissing, ErrorCode::kMalformed}};
constexpr JsonFieldReader kValues{JsonFieldWording{Got::kValue, Missing::kMissingExpected, ErrorCode::kMalformed}};
constexpr JsonFieldReader kScalars{JsonFieldWording{Got::kScalarValue}};

template <typename T>
std::string ErrorOf(const Result<T>& result) {
  return result.ok() ? "(ok)" : result.error().message;
}

// The node agent's wording: a scalar as written (a string quoted and cut at 64 printable
// characters), a list or an object by its type.
TEST(JsonField, ScalarsAreShownAsWrittenAndContainersByType) {
  const json doc = json::parse(R"({"s": "0", "f": 1.5, "b": true, "a": [1], "o": {"x": 1}, "i": 12})");
  EXPECT_EQ(ErrorOf(kScalars.Integer(FieldOf(doc, "s"))), "field 's': expected an integer, got \"0\"");
  EXPECT_EQ(ErrorOf(kScalars.Integer(FieldOf(doc, "f"))), "field 'f': expected an integer, got 1.5");
  EXPECT_EQ(ErrorOf(kScalars.Integer(FieldOf(doc, "b"))), "field 'b': expected an integer, got true");
  EXPECT_EQ(ErrorOf(kScalars.Integer(FieldOf(doc, "a"))), "field 'a': expected an integer, got array");
  EXPECT_EQ(ErrorOf(kScalars.Integer(FieldOf(doc, "o"))), "field 'o': expected an integer, got object");
  EXPECT_EQ(ErrorOf(kScalars.String(FieldOf(doc, "i"))), "field 'i': expected a string, got 12");
  const json long_text = json{{"s", std::string(100, 'x') + "\x1b"}};
  EXPECT_EQ(kScalars.Integer(FieldOf(long_text, "s")).error().message.size(),
            std::string("field 's': expected an integer, got \"\"").size() + 64 + 3)
      << kScalars.Integer(FieldOf(long_text, "s")).error().message;
}

// A field's path: a member's is "parent.name", an element's "path[index]".
TEST(JsonField, NamesTheFieldByItsPath) {
  const json doc = json::parse(R"({"server": {"power_w": "x"}, "gpus": [0, 1, "x"]})");
  EXPECT_EQ(FieldOf(doc, "server").path, "server");
  EXPECT_EQ(FieldOf(doc["server"], "power_w", "server").path, "server.power_w");
  EXPECT_EQ(ElementOf(doc["gpus"], 2, "gpus").path, "gpus[2]");
  EXPECT_EQ(FieldOf(doc, "absent").value, nullptr);
  EXPECT_EQ(ElementOf(doc["gpus"], 3, "gpus").value, nullptr);
  EXPECT_EQ(FieldOf(json::array(), "x").value, nullptr);

  EXPECT_EQ(ErrorOf(kValues.Integer(ElementOf(doc["gpus"], 2, "gpus"))),
            "field 'gpus[2]': expected an integer, got \"x\"");
  EXPECT_EQ(ErrorOf(kValues.Number(FieldOf(doc["server"], "power_w", "server"))),
            "field 'server.power_w': expected a number, got \"x\"");
}

// Each wording says what was there, and that nothing was, its own way; the code is the wording's.
TEST(JsonField, WordsWhatWasThereAsTheReaderSays) {
  const json doc = json::parse(R"({"s": "two", "i": 7, "f": 1.5, "a": [1, 2], "n": null, "b": true, "neg": -1})");
  EXPECT_EQ(ErrorOf(kTypes.Integer(FieldOf(doc, "s"))), "field 's': expected an integer, got string");
  EXPECT_EQ(ErrorOf(kTypes.String(FieldOf(doc, "i"))), "field 'i': expected a string, got integer");
  EXPECT_EQ(ErrorOf(kTypes.Integer(FieldOf(doc, "f"))), "field 'f': expected an integer, got number");
  EXPECT_EQ(ErrorOf(kTypes.Number(FieldOf(doc, "a"))), "field 'a': expected a number, got array");
  EXPECT_EQ(ErrorOf(kTypes.Integer(FieldOf(doc, "missing"))), "field 'missing' is required");
  EXPECT_EQ(kTypes.Integer(FieldOf(doc, "s")).error().code, ErrorCode::kInvalidArgument);

  EXPECT_EQ(ErrorOf(kArticles.NonNegativeInteger(FieldOf(doc, "s"))),
            "field 's': expected an integer >= 0, got a string");
  EXPECT_EQ(ErrorOf(kArticles.NonNegativeInteger(FieldOf(doc, "neg"))),
            "field 'neg': expected an integer >= 0, got -1");
  EXPECT_EQ(ErrorOf(kArticles.String(FieldOf(doc, "a"))), "field 'a': expected a string, got an array");
  EXPECT_EQ(ErrorOf(kArticles.String(FieldOf(doc, "n"))), "field 'n': expected a string, got null");
  EXPECT_EQ(ErrorOf(kArticles.Bool(FieldOf(doc, "missing"))), "field 'missing': expected true or false, missing");
  EXPECT_EQ(kArticles.Bool(FieldOf(doc, "missing")).error().code, ErrorCode::kMalformed);

  EXPECT_EQ(ErrorOf(kValues.Bool(FieldOf(doc, "i"))), "field 'i': expected true or false, got 7");
  EXPECT_EQ(ErrorOf(kValues.Object(FieldOf(doc, "a"))), "field 'a': expected an object, got [1,2]");
  EXPECT_EQ(ErrorOf(kValues.Array(FieldOf(doc, "missing"))), "field 'missing' is missing; expected an array");

  // What was expected can be said more exactly than the type.
  EXPECT_EQ(kTypes.Expected(FieldOf(doc, "b"), "a list of GPU indices").message,
            "field 'b': expected a list of GPU indices, got boolean");
  // A whole document is named by what it is.
  EXPECT_EQ(kTypes.RequireObject(doc["a"], "JobInfo").error().message, "JobInfo: expected a JSON object, got array");
  EXPECT_EQ(kArticles.RequireObject(doc["a"], "deployment").error().message,
            "deployment: expected a JSON object, got an array");
  EXPECT_TRUE(kTypes.RequireObject(doc, "JobInfo").ok());
}

// Values of the right type are read as they are; integers are compared in their own type, so a
// huge one does not wrap into range.
TEST(JsonField, ReadsValuesAndChecksRanges) {
  const json doc = json::parse(R"({"i": 7, "big": 18446744073709551615, "neg": -5, "f": 2.5, "s": "x", "b": false})");
  EXPECT_EQ(*kTypes.Integer(FieldOf(doc, "i")), 7);
  EXPECT_EQ(*kTypes.Number(FieldOf(doc, "i")), 7.0);
  EXPECT_EQ(*kTypes.Number(FieldOf(doc, "f")), 2.5);
  EXPECT_EQ(*kTypes.String(FieldOf(doc, "s")), "x");
  EXPECT_FALSE(*kTypes.Bool(FieldOf(doc, "b")));
  EXPECT_EQ(*kTypes.NonNegativeInteger(FieldOf(doc, "big")), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*kTypes.IntegerIn(FieldOf(doc, "i"), 1, 7), 7);
  EXPECT_EQ(ErrorOf(kTypes.IntegerIn(FieldOf(doc, "i"), 8, 9)), "field 'i': 7 is out of range [8, 9]");
  EXPECT_EQ(ErrorOf(kTypes.IntegerIn(FieldOf(doc, "big"), 0, 100)),
            "field 'big': 18446744073709551615 is out of range [0, 100]");
  EXPECT_EQ(ErrorOf(kTypes.IntegerIn(FieldOf(doc, "neg"), 0, 100)), "field 'neg': -5 is out of range [0, 100]");
  const json infinite = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ErrorOf(kTypes.Number(JsonField{&infinite, "x"})), "field 'x': expected a finite number");
}

}  // namespace
}  // namespace wattcut
