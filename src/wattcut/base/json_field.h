// Reading one field of a JSON document with its type checked. Every message names the field by its
// path and says what was expected and what was there:
//     field 'gpus[2]': expected an integer, got "x"
//     field 'server.power_w': expected a number, got "x"
//     field 'version' is required
// The readers of requests and answers (the planning server, the row controller, the rank's
// deployment, the node agent) all read through one JsonFieldReader each; they differ only in the
// wording below, the one each had before it was shared (their tests check it word for word), and
// in the context they put in front ("deployment: ").
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wattcut/base/error_code.h"
#include "wattcut/base/result.h"

namespace wattcut {

// A field's value and its path as messages name it ("gpus[2]", "server.power_w"). No value: the
// field is absent.
struct JsonField {
  const nlohmann::json* value = nullptr;
  std::string path;
};

// Field `name` of `object` (no value when `object` is not an object or lacks it), its path
// "parent.name", or "name" with no parent.
JsonField FieldOf(const nlohmann::json& object, std::string_view name, std::string_view parent = {});
// Element `index` of `array` (no value past its end), its path "path[index]".
JsonField ElementOf(const nlohmann::json& array, size_t index, std::string_view path);

// How a reader's messages word what was there and what was not.
struct JsonFieldWording {
  enum class Got {
    kType,             // "got string", "got integer", "got number", "got array" (the planning server)
    kTypeWithArticle,  // "got a string", "got an array"; a number as written, "got -1" (the deployment)
    kValue,            // the value as JSON, at most 80 characters: "got \"x\"", "got 5" (the row controller)
    kScalarValue,      // a scalar as written, a string quoted (at most 64 printable characters), an array or
                       // object by its type: "got \"x\"", "got 1.5", "got true", "got array" (the node agent)
  };
  enum class Missing {
    kRequired,         // "field 'x' is required"
    kMissingExpected,  // "field 'x' is missing; expected a number"
    kExpectedMissing,  // "field 'x': expected an integer >= 0, missing"
  };
  Got got = Got::kType;
  Missing missing = Missing::kRequired;
  ErrorCode code = ErrorCode::kInvalidArgument;
};

class JsonFieldReader {
 public:
  constexpr explicit JsonFieldReader(JsonFieldWording wording) : wording_(wording) {}

  // "field 'PATH': expected WHAT, got SHOWN", or the wording's message for a missing field.
  Error Expected(const JsonField& field, std::string_view what) const;
  // "WHAT: expected a JSON object, got SHOWN" unless `document` is one (a whole body, not a field).
  Status RequireObject(const nlohmann::json& document, std::string_view what) const;
  // What was there, as this reader's messages show it after "got ".
  std::string Shown(const nlohmann::json& value) const;

  // The field's value, of the type asked; Expected(field, what) otherwise.
  Result<int64_t> Integer(const JsonField& field, std::string_view what = "an integer") const;
  // An integer in [min, max]: one outside is "field 'PATH': V is out of range [min, max]".
  Result<int64_t> IntegerIn(const JsonField& field, int64_t min, int64_t max,
                            std::string_view what = "an integer") const;
  // An integer >= 0, up to 2^64 - 1.
  Result<uint64_t> NonNegativeInteger(const JsonField& field, std::string_view what = "an integer >= 0") const;
  // A finite number: a value that is not finite is "field 'PATH': expected a finite number".
  Result<double> Number(const JsonField& field, std::string_view what = "a number") const;
  Result<std::string> String(const JsonField& field, std::string_view what = "a string") const;
  Result<bool> Bool(const JsonField& field, std::string_view what = "true or false") const;
  Result<const nlohmann::json*> Array(const JsonField& field, std::string_view what = "an array") const;
  Result<const nlohmann::json*> Object(const JsonField& field, std::string_view what = "an object") const;

 private:
  Error Refused(std::string message) const { return Error{std::move(message), wording_.code}; }

  JsonFieldWording wording_;
};

}  // namespace wattcut
