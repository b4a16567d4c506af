#include "wattcut/http/bearer_token.h"

#include <strings.h>

namespace wattcut::http {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Walk the longer length so that the time does not reveal a common prefix.
  size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

std::optional<std::string_view> BearerCredentials(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || ::strncasecmp(header.data(), kScheme.data(), kScheme.size()) != 0 ||
      header[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view credentials = header.substr(kScheme.size());
  while (!credentials.empty() && credentials.front() == ' ') credentials.remove_prefix(1);
  while (!credentials.empty() && (credentials.back() == ' ' || credentials.back() == '\t')) {
    credentials.remove_suffix(1);
  }
  return credentials;
}

}  // namespace wattcut::http
