#include "wattcut/server/json_fields.h"

#include "wattcut/base/printable_text.h"

namespace wattcut::server {

using nlohmann::json;

std::string Shown(const json& value) {
  if (value.is_string()) {
    return "\"" + PrintableText(value.get_ref<const std::string&>(), 64) + "\"";
  }
  return TypeName(value);
}

Result<int> IntField(const json& object, const std::string& name, int min, int max, std::optional<int> fallback) {
  const JsonField field = FieldOf(object, name);
  if (fallback && (!field.value || field.value->is_null())) return *fallback;
  auto v = kRequestFields.IntegerIn(field, min, max);
  if (!v) return v.error();
  return static_cast<int>(*v);
}

Result<double> NumberValue(const json& value, const std::string& path) {
  return kRequestFields.Number(JsonField{&value, path});
}

Result<double> NumberField(const json& object, const std::string& name, std::optional<double> fallback) {
  const JsonField field = FieldOf(object, name);
  if (fallback && (!field.value || field.value->is_null())) return *fallback;
  return kRequestFields.Number(field);
}

Result<std::vector<double>> NumberList(const json& value, const std::string& path) {
  auto list = kRequestFields.Array(JsonField{&value, path}, "a list of numbers");
  if (!list) return list.error();
  std::vector<double> out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    auto v = kRequestFields.Number(ElementOf(value, i, path));
    if (!v) return v.error();
    out.push_back(*v);
  }
  return out;
}

Result<std::string> StringValue(const json& value, const std::string& path) {
  return kRequestFields.String(JsonField{&value, path});
}

}  // namespace wattcut::server
