// Reading a request body's fields: each reader names the field and says what was expected
// ("field 'pp_degree': expected an integer, got \"two\""). Shared by the request parsers
// (http_api.h) and the job settings' (job_settings.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::server {

// "integer", "number", "string", ...: a JSON value's type as a message names it.
std::string TypeName(const nlohmann::json& value);
// A short rendering of a user value for messages: never recursive, never long, no control bytes.
std::string Shown(const nlohmann::json& value);
// An error unless `value` is an object ("WHAT: expected a JSON object, got TYPE").
Status RequireObject(const nlohmann::json& value, const std::string& what);
// An integer field in [min, max]; absent (or null with a fallback): `fallback`, or "is required".
Result<int> IntField(const nlohmann::json& object, const std::string& name, int min, int max,
                     std::optional<int> fallback = std::nullopt);
// A finite number.
Result<double> NumberValue(const nlohmann::json& value, const std::string& what);
Result<double> NumberField(const nlohmann::json& object, const std::string& name,
                           std::optional<double> fallback = std::nullopt);
// A list of finite numbers.
Result<std::vector<double>> NumberList(const nlohmann::json& value, const std::string& what);

// `result`, or its error with `what: ` in front.
template <typename T>
Result<T> Prefix(Result<T> result, const std::string& what) {
  if (result) return result;
  return Error{what + ": " + result.error().message};
}

}  // namespace wattcut::server
