// Reading the JSON answers of the services the row controller calls (the node agents, the planning
// server): each field is checked for its type and range, and an error names the field and what
// was expected ("field 'server.power_w': expected a number, got \"x\"").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/json_field.h"
#include "wattcut/base/result.h"
#include "wattcut/http/http_client.h"

namespace wattcut::row_control {

// The row controller's reader of answers (base/json_field.h): "got " and the value as JSON,
// "field 'x' is missing; expected a number", kMalformed.
inline constexpr JsonFieldReader kAnswerFields{JsonFieldWording{
    JsonFieldWording::Got::kValue, JsonFieldWording::Missing::kMissingExpected, ErrorCode::kMalformed}};

// The service's {"error","code"} of a refused request (prefixed "HTTP 409: "), or what can be
// said without one.
Error RefusalOf(const http::HttpResponse& answer);

// The body as a JSON object (kMalformed otherwise, quoting the start of the body).
Result<nlohmann::json> ParseObject(const std::string& body);

// `name` of `object`, shown as `field` in errors (a path such as "server.power_w").
// A finite number >= minimum.
Result<double> NumberField(const nlohmann::json& object, const std::string& name, const std::string& field,
                           double minimum);
// An integer in [minimum, 1e9].
Result<int> IntField(const nlohmann::json& object, const std::string& name, const std::string& field, int minimum);
Result<std::string> StringField(const nlohmann::json& object, const std::string& name, const std::string& field);
Result<bool> BoolField(const nlohmann::json& object, const std::string& name, const std::string& field);
Result<const nlohmann::json*> ArrayField(const nlohmann::json& object, const std::string& name);
// A value as it is shown in an error: its JSON, at most 80 characters (kAnswerFields.Shown).
std::string Shown(const nlohmann::json& value);

}  // namespace wattcut::row_control
