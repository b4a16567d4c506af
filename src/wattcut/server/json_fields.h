// Reading a request body's fields: each reader names the field and says what was expected
// ("field 'pp_degree': expected an integer, got string"), in the planning server's wording of the
// shared JSON field reader (base/json_field.h). Shared by the request parsers (http_api.h) and the
// job settings' (job_settings.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/json_field.h"
#include "wattcut/base/result.h"

namespace wattcut::server {

// The planning server's reader: "got string" (the value's type), "field 'x' is required",
// kInvalidArgument.
inline constexpr JsonFieldReader kRequestFields{JsonFieldWording{}};

// "integer", "number", "string", ...: a JSON value's type as a message names it.
inline std::string TypeName(const nlohmann::json& value) { return kRequestFields.Shown(value); }
// A short rendering of a user value for messages: never recursive, never long, no control bytes.
std::string Shown(const nlohmann::json& value);
// An error unless `value` is an object ("WHAT: expected a JSON object, got TYPE").
inline Status RequireObject(const nlohmann::json& value, const std::string& what) {
  return kRequestFields.RequireObject(value, what);
}
// An integer field in [min, max]; absent (or null with a fallback): `fallback`, or "is required".
Result<int> IntField(const nlohmann::json& object, const std::string& name, int min, int max,
                     std::optional<int> fallback = std::nullopt);
// A finite number at `path` ("field 'PATH': expected a number, got string").
Result<double> NumberValue(const nlohmann::json& value, const std::string& path);
Result<double> NumberField(const nlohmann::json& object, const std::string& name,
                           std::optional<double> fallback = std::nullopt);
// A list of finite numbers at `path` (its elements' paths "PATH[i]").
Result<std::vector<double>> NumberList(const nlohmann::json& value, const std::string& path);
// A string at `path`.
Result<std::string> StringValue(const nlohmann::json& value, const std::string& path);

// `result`, or its error with `what: ` in front.
template <typename T>
Result<T> Prefix(Result<T> result, const std::string& what) {
  if (result) return result;
  return Error{what + ": " + result.error().message};
}

}  // namespace wattcut::server
