#include "wattcut/row_control/answer_json.h"

#include "wattcut/base/json_object.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/http/http_status.h"

namespace wattcut::row_control {

using json = nlohmann::json;

std::string Shown(const json& value) { return kAnswerFields.Shown(value); }

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

namespace {

// `name` of `object`, at path `field`.
JsonField Field(const json& object, const std::string& name, const std::string& field) {
  auto it = object.find(name);
  return {it == object.end() ? nullptr : &*it, field};
}

}  // namespace

Result<double> NumberField(const json& object, const std::string& name, const std::string& field, double minimum) {
  const JsonField at = Field(object, name, field);
  auto value = kAnswerFields.Number(at);
  if (!value) return value.error();
  if (*value < minimum) return kAnswerFields.Expected(at, "a finite number >= " + PrintableText(json(minimum).dump()));
  return value;
}

Result<int> IntField(const json& object, const std::string& name, const std::string& field, int minimum) {
  const JsonField at = Field(object, name, field);
  auto value = kAnswerFields.Integer(at);
  if (!value) return value.error();
  if (*value < minimum || *value > 1'000'000'000) {
    return kAnswerFields.Expected(at, "an integer >= " + std::to_string(minimum));
  }
  return static_cast<int>(*value);
}

Result<std::string> StringField(const json& object, const std::string& name, const std::string& field) {
  return kAnswerFields.String(Field(object, name, field));
}

Result<bool> BoolField(const json& object, const std::string& name, const std::string& field) {
  return kAnswerFields.Bool(Field(object, name, field));
}

Result<const json*> ArrayField(const json& object, const std::string& name) {
  return kAnswerFields.Array(Field(object, name, name));
}

}  // namespace wattcut::row_control
