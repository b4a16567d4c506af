#include "wattcut/http/path_segment.h"

#include <cctype>

namespace wattcut::http {

std::string EncodePathSegment(std::string_view segment) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace wattcut::http
