#include "wattcut/base/index_ranges.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "wattcut/base/printable_text.h"

namespace wattcut {

std::string IndexRangesText(const std::vector<int>& indices) {
  std::string text;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(indices[i]);
    if (j > i) text += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return text.empty() ? "none" : text;
}

Result<std::vector<int>> ParseIndexRanges(std::string_view text, int max_index, const std::string& what) {
  std::vector<int> indices;
  if (text.empty()) return indices;
  auto number = [max_index](std::string_view digits) -> std::optional<int> {
    int value = 0;
    if (digits.empty()) return std::nullopt;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size() || value < 0 || value > max_index) {
      return std::nullopt;
    }
    return value;
  };
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = text.find(',', at);
    const size_t end = comma == std::string_view::npos ? text.size() : comma;
    const std::string_view item = text.substr(at, end - at);
    const size_t dash = item.find('-');
    const auto first = number(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (!first || !last || *last < *first) {
      return Error::InvalidArgument(what + " '" + PrintableText(std::string(text), 200) + "': '" +
                                    PrintableText(std::string(item), 40) + "' is not an index or a range (0 to " +
                                    std::to_string(max_index) + "); expected indices and ranges such as 0,1,4-7");
    }
    for (int i = *first; i <= *last; ++i) indices.push_back(i);
    at = end + 1;
  }
  return indices;
}

}  // namespace wattcut
