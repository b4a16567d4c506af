#include "wattcut/row_control/answer_json.h"

#include <cmath>

#include "wattcut/base/json_object.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/http/http_status.h"

namespace wattcut::row_control {

using json = nlohmann::json;

std::string Shown(const json& value) { return JsonPreview(value, 80); }

// The service's {"error","code"}, or what can be said without one.
Error RefusalOf(const http::HttpResponse& answer) {
  Error error = http::ErrorOfAnswer(answer.status, answer.body);
  json body = ParseJsonOrDiscarded(answer.body);
  return body.is_object() && body.contains("error") ? error.WithContext("HTTP " + std::to_string(answer.status) + ": ")
                                                    : error;
}

Result<json> ParseObject(const std::string& body) {
  json doc = ParseJsonOrDiscarded(body);
  if (doc.is_discarded()) return Error::Malformed("the answer is not JSON: '" + PrintableText(body, 120) + "'");
  if (!doc.is_object()) return Error::Malformed("the answer is not a JSON object: '" + PrintableText(body, 120) + "'");
  return doc;
}

// A finite number at `field` of `object`, >= minimum.
Result<double> NumberField(const json& object, const std::string& name, const std::string& field, double minimum) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected a number");
  if (!it->is_number()) return Error::Malformed("field '" + field + "': expected a number, got " + Shown(*it));
  double value = it->get<double>();
  if (!std::isfinite(value) || value < minimum) {
    return Error::Malformed("field '" + field + "': expected a finite number >= " +
                            PrintableText(json(minimum).dump()) + ", got " + Shown(*it));
  }
  return value;
}

Result<int> IntField(const json& object, const std::string& name, const std::string& field, int minimum) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected an integer");
  if (!it->is_number_integer()) {
    return Error::Malformed("field '" + field + "': expected an integer, got " + Shown(*it));
  }
  int64_t value = it->get<int64_t>();
  if (value < minimum || value > 1'000'000'000) {
    return Error::Malformed("field '" + field + "': expected an integer >= " + std::to_string(minimum) + ", got " +
                            Shown(*it));
  }
  return static_cast<int>(value);
}

Result<std::string> StringField(const json& object, const std::string& name, const std::string& field) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected a string");
  if (!it->is_string()) return Error::Malformed("field '" + field + "': expected a string, got " + Shown(*it));
  return it->get<std::string>();
}

Result<bool> BoolField(const json& object, const std::string& name, const std::string& field) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + field + "' is missing; expected true or false");
  if (!it->is_boolean()) return Error::Malformed("field '" + field + "': expected true or false, got " + Shown(*it));
  return it->get<bool>();
}

Result<const json*> ArrayField(const json& object, const std::string& name) {
  auto it = object.find(name);
  if (it == object.end()) return Error::Malformed("field '" + name + "' is missing; expected an array");
  if (!it->is_array()) return Error::Malformed("field '" + name + "': expected an array, got " + Shown(*it));
  return &*it;
}

}  // namespace wattcut::row_control
