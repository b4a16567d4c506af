// A JSON request body read strictly, as every service of wattcut reads one: a key given twice in
// one object is refused (JSON parsers disagree on which one wins, so a proxy and the service
// could each act on a different value), and so is a field the request does not know ("lease"
// for "lease_s" would otherwise be a target that never lapses).
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wattcut/base/result.h"

namespace wattcut {

// `text` as JSON; kMalformed for text that is not JSON ("malformed JSON: ...", the parser's
// words with control bytes escaped) or that gives one key twice in an object ("malformed JSON:
// field 'x' appears twice").
Result<nlohmann::json> ParseJsonWithoutDuplicateKeys(std::string_view text);

// `text` as JSON, or a discarded value (is_discarded()) when it is not JSON or nests deeper than
// kJsonMaxDepth (json_text_check.h): nlohmann's json::parse(text, nullptr, false) for text from
// another process or a file, without a document that its dump or copy could not get through.
// A key given twice keeps its last value, as json::parse does.
nlohmann::json ParseJsonOrDiscarded(std::string_view text);

// "field 'NAME'" for messages (control bytes escaped, at most 64 characters of the name).
std::string FieldName(std::string_view name);

// kInvalidArgument naming the first field of `object` that is not in `known`
// ("unknown field 'lease'; expected only peak_power_per_gpu_w, ...").
Status RefuseUnknownFields(const nlohmann::json& object, std::initializer_list<const char*> known);

}  // namespace wattcut
