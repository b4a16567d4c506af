// A JSON value as an error message quotes it: its start, never more than `max_chars`, with
// control bytes escaped. Bounded in what it reads as well as in what it writes: it stops once the
// preview is full and writes "..." for what lies deeper than kJsonMaxDepth, so a 50 MB string or a
// value nested 100,000 levels (which nlohmann's dump would recurse through) costs no more than a
// short one.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace wattcut {

// `[1,2,{"a":"b"}]`, cut to at most max_chars (plus "...").
std::string JsonPreview(const nlohmann::json& value, size_t max_chars);

// "array [[0,1],[2,3]]": the value's type name and its preview, for "got ..." in messages.
std::string JsonTypeAndPreview(const nlohmann::json& value, size_t max_chars = 40);

}  // namespace wattcut
