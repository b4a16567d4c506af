#include "wattcut/base/json_object.h"

#include <string>
#include <vector>

#include "wattcut/base/json_text_check.h"
#include "wattcut/base/printable_text.h"

namespace wattcut {

using nlohmann::json;

std::string FieldName(std::string_view name) { return "field '" + PrintableText(name, 64) + "'"; }

Result<json> ParseJsonWithoutDuplicateKeys(std::string_view text) {
  if (auto problem = FindJsonTextProblem(text)) {
    if (problem->kind == JsonTextProblem::Kind::kDuplicateKey) {
      return Error::Malformed("malformed JSON: " + FieldName(problem->key) + " appears twice");
    }
    if (problem->kind == JsonTextProblem::Kind::kTooDeep) {
      return Error::Malformed("malformed JSON: " + JsonDepthMessage(*problem));
    }
    // nlohmann's parse errors say where; its number overflow ("1e400") does not.
    const std::string where = problem->message.find(" at line ") == std::string::npos
                                  ? " (at " + LineAndColumn(text, problem->byte) + ")"
                                  : "";
    // nlohmann quotes the bytes it stopped at (a DEL, say) as they are.
    return Error::Malformed("malformed JSON: " + PrintableText(problem->message, 400) + where);
  }
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return Error::Malformed("malformed JSON: " + PrintableText(e.what(), 400));
  }
}

json ParseJsonOrDiscarded(std::string_view text) {
  if (auto problem = FindJsonTextProblem(text); problem && problem->kind != JsonTextProblem::Kind::kDuplicateKey) {
    return json(json::value_t::discarded);
  }
  return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
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
