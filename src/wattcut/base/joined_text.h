// Items written one after another with a separator between them: Joined({"a", "b"}, ", ") == "a, b".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wattcut {

std::string Joined(const std::vector<std::string>& items, std::string_view separator);

}  // namespace wattcut
