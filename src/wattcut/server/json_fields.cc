#include "wattcut/server/json_fields.h"

#include <cmath>
#include <limits>

#include "wattcut/base/printable_text.h"

namespace wattcut::server {

using nlohmann::json;

std::string TypeName(const json& value) {
  if (value.is_number_integer()) return "integer";
  if (value.is_number_float()) return "number";
  return value.type_name();
}

// A short rendering of a user value for messages: never recursive, never long, no control
// bytes.
std::string Shown(const json& value) {
  if (value.is_string()) {
    return "\"" + PrintableText(value.get_ref<const std::string&>(), 64) + "\"";
  }
  return TypeName(value);
}

Status RequireObject(const json& value, const std::string& what) {
  if (!value.is_object()) {
    return Error{what + ": expected a JSON object, got " + TypeName(value)};
  }
  return Status::Ok();
}

// Reads an integer field in [min, max]. `required` false returns `fallback` when absent.
Result<int> IntField(const json& object, const std::string& name, int min, int max, std::optional<int> fallback) {
  auto it = object.find(name);
  if (it == object.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return Error{"field '" + name + "' is required"};
  }
  if (!it->is_number_integer()) {
    return Error{"field '" + name + "': expected an integer, got " + TypeName(*it)};
  }
  // Compare as the widest integer type so that huge values do not wrap.
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    // nlohmann holds every non-negative integer as unsigned: the lower bound applies here too.
    if (v > static_cast<uint64_t>(max) || (min > 0 && v < static_cast<uint64_t>(min))) {
      return Error{"field '" + name + "': " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                   std::to_string(max) + "]"};
    }
    return static_cast<int>(v);
  }
  int64_t v = it->get<int64_t>();
  if (v < min || v > max) {
    return Error{"field '" + name + "': " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]"};
  }
  return static_cast<int>(v);
}

Result<double> NumberValue(const json& value, const std::string& what) {
  if (!value.is_number()) {
    return Error{what + ": expected a number, got " + TypeName(value)};
  }
  double v = value.get<double>();
  if (!std::isfinite(v)) return Error{what + ": expected a finite number"};
  return v;
}

Result<double> NumberField(const json& object, const std::string& name, std::optional<double> fallback) {
  auto it = object.find(name);
  if (it == object.end() || (it->is_null() && fallback)) {
    if (fallback) return *fallback;
    return Error{"field '" + name + "' is required"};
  }
  return NumberValue(*it, "field '" + name + "'");
}

Result<std::vector<double>> NumberList(const json& value, const std::string& what) {
  if (!value.is_array()) return Error{what + ": expected a list of numbers, got " + TypeName(value)};
  std::vector<double> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    auto v = NumberValue(value[i], what + "[" + std::to_string(i) + "]");
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

}  // namespace wattcut::server
