#include "wattcut/base/json_field.h"

#include <cmath>

#include "wattcut/base/general_text.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/base/printable_text.h"

namespace wattcut {

using nlohmann::json;

JsonField FieldOf(const json& object, std::string_view name, std::string_view parent) {
  JsonField field{nullptr, parent.empty() ? std::string(name) : std::string(parent) + "." + std::string(name)};
  if (object.is_object()) {
    auto it = object.find(name);
    if (it != object.end()) field.value = &*it;
  }
  return field;
}

JsonField ElementOf(const json& array, size_t index, std::string_view path) {
  return {array.is_array() && index < array.size() ? &array[index] : nullptr,
          std::string(path) + "[" + std::to_string(index) + "]"};
}

namespace {

// "integer", "number", "string", "array", ...
std::string TypeName(const json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

// "a string", "an array", "a boolean", "null", ...
std::string TypeWithArticle(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  return "an object";
}

}  // namespace

std::string JsonFieldReader::Shown(const json& value) const {
  switch (wording_.got) {
    case JsonFieldWording::Got::kType:
      return TypeName(value);
    case JsonFieldWording::Got::kTypeWithArticle:
      return value.is_number() ? value.dump() : TypeWithArticle(value);
    case JsonFieldWording::Got::kValue:
      return JsonPreview(value, 80);
    case JsonFieldWording::Got::kScalarValue:
      if (value.is_string()) return "\"" + PrintableText(value.get_ref<const std::string&>(), 64) + "\"";
      if (value.is_number_integer()) return value.dump();
      if (value.is_number_float()) return GeneralText(value.get<double>());
      if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
      return TypeName(value);
  }
  return TypeName(value);
}

Error JsonFieldReader::Expected(const JsonField& field, std::string_view what) const {
  const std::string name = "field '" + field.path + "'";
  if (field.value) return Refused(name + ": expected " + std::string(what) + ", got " + Shown(*field.value));
  switch (wording_.missing) {
    case JsonFieldWording::Missing::kRequired:
      return Refused(name + " is required");
    case JsonFieldWording::Missing::kMissingExpected:
      return Refused(name + " is missing; expected " + std::string(what));
    case JsonFieldWording::Missing::kExpectedMissing:
      return Refused(name + ": expected " + std::string(what) + ", missing");
  }
  return Refused(name + " is required");
}

Status JsonFieldReader::RequireObject(const json& document, std::string_view what) const {
  if (document.is_object()) return Status::Ok();
  return Refused(std::string(what) + ": expected a JSON object, got " + Shown(document));
}

Result<int64_t> JsonFieldReader::Integer(const JsonField& field, std::string_view what) const {
  return IntegerIn(field, INT64_MIN, INT64_MAX, what);
}

Result<int64_t> JsonFieldReader::IntegerIn(const JsonField& field, int64_t min, int64_t max,
                                           std::string_view what) const {
  if (!field.value || !field.value->is_number_integer()) return Expected(field, what);
  const auto out_of_range = [&](const std::string& v) {
    return Refused("field '" + field.path + "': " + v + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]");
  };
  // Compared in the value's own type so that huge values do not wrap: nlohmann holds every
  // non-negative integer as unsigned.
  if (field.value->is_number_unsigned()) {
    const uint64_t v = field.value->get<uint64_t>();
    if (max < 0 || v > static_cast<uint64_t>(max) || (min > 0 && v < static_cast<uint64_t>(min))) {
      return out_of_range(std::to_string(v));
    }
    return static_cast<int64_t>(v);
  }
  const int64_t v = field.value->get<int64_t>();
  if (v < min || v > max) return out_of_range(std::to_string(v));
  return v;
}

Result<uint64_t> JsonFieldReader::NonNegativeInteger(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_number_integer() ||
      (!field.value->is_number_unsigned() && field.value->get<int64_t>() < 0)) {
    return Expected(field, what);
  }
  return field.value->get<uint64_t>();
}

Result<double> JsonFieldReader::Number(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_number()) return Expected(field, what);
  const double v = field.value->get<double>();
  if (!std::isfinite(v)) return Refused("field '" + field.path + "': expected a finite number");
  return v;
}

Result<std::string> JsonFieldReader::String(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_string()) return Expected(field, what);
  return field.value->get<std::string>();
}

Result<bool> JsonFieldReader::Bool(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_boolean()) return Expected(field, what);
  return field.value->get<bool>();
}

Result<const json*> JsonFieldReader::Array(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_array()) return Expected(field, what);
  return field.value;
}

Result<const json*> JsonFieldReader::Object(const JsonField& field, std::string_view what) const {
  if (!field.value || !field.value->is_object()) return Expected(field, what);
  return field.value;
}

}  // namespace wattcut
