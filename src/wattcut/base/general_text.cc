#include "wattcut/base/general_text.h"

#include <charconv>

namespace wattcut {

std::string GeneralText(double value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general);
  return std::string(buffer, result.ptr);
}

std::string GeneralText(double value, int significant_digits) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general, significant_digits);
  return std::string(buffer, result.ptr);
}

}  // namespace wattcut
