#include "wattcut/base/json_object.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wattcut/base/printable_text.h"

namespace wattcut {

using nlohmann::json;

namespace {

std::string FieldName(std::string_view name) { return "field '" + PrintableText(name, 64) + "'"; }

}  // namespace

Result<json> ParseJsonWithoutDuplicateKeys(std::string_view text) {
  std::vector<std::set<std::string>> keys_of_open_objects;
  std::optional<std::string> duplicate;
  auto note_keys = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_of_open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end && !keys_of_open_objects.empty()) {
      keys_of_open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !keys_of_open_objects.empty() && parsed.is_string()) {
      if (!keys_of_open_objects.back().insert(parsed.get<std::string>()).second && !duplicate) {
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  json value;
  try {
    value = json::parse(text.begin(), text.end(), note_keys);
  } catch (const json::exception& e) {
    // nlohmann quotes the bytes it stopped at (a DEL, say) as they are.
    return Error::Malformed("malformed JSON: " + PrintableText(e.what(), 400));
  }
  if (duplicate) return Error::Malformed("malformed JSON: " + FieldName(*duplicate) + " appears twice");
  return value;
}

Status RefuseUnknownFields(const json& object, std::initializer_list<const char*> known) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (const char* name : known) found = found || key == name;
    if (found) continue;
    std::string list;
    for (const char* name : known) list += (list.empty() ? "" : ", ") + std::string(name);
    return Error::InvalidArgument("unknown " + FieldName(key) + "; expected only " + list);
  }
  return Status::Ok();
}

}  // namespace wattcut
