#include "wattcut/base/json_preview.h"

#include "wattcut/base/json_text_check.h"
#include "wattcut/base/printable_text.h"

namespace wattcut {
namespace {

using json = nlohmann::json;

// A string as JSON writes it, from at most its first `budget` bytes.
std::string Quoted(const std::string& text, size_t budget) {
  return json(text.substr(0, budget + 1)).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Appends `value`, at nesting level `depth` (1 at the top), as JSON to `out` until `out` holds more
// than `budget` characters.
void Append(const json& value, int depth, size_t budget, std::string& out) {
  if (out.size() > budget) return;
  switch (value.type()) {
    case json::value_t::array:
    case json::value_t::object: {
      const bool object = value.is_object();
      out += object ? '{' : '[';
      if (depth >= kJsonMaxDepth) {
        out += "...";
      } else {
        bool first = true;
        for (auto it = value.begin(); it != value.end() && out.size() <= budget; ++it) {
          if (!first) out += ',';
          first = false;
          if (object) out += Quoted(it.key(), budget) + ":";
          Append(*it, depth + 1, budget, out);
        }
      }
      out += object ? '}' : ']';
      return;
    }
    case json::value_t::string:
      out += Quoted(value.get_ref<const std::string&>(), budget);
      return;
    default:  // a number, a boolean, null, binary: short
      out += value.dump(-1, ' ', false, json::error_handler_t::replace);
      return;
  }
}

}  // namespace

std::string JsonPreview(const json& value, size_t max_chars) {
  std::string out;
  Append(value, 1, max_chars, out);
  return PrintableText(out, max_chars);
}

std::string JsonTypeAndPreview(const json& value, size_t max_chars) {
  return std::string(value.type_name()) + " " + JsonPreview(value, max_chars);
}

}  // namespace wattcut
