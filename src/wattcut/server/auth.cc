#include "wattcut/server/auth.h"

#include <fstream>

namespace wattcut::server {

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  return host.substr(0, 4) == "127.";
}

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

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{"cannot read token file " + path};
  std::string line;
  std::getline(in, line);
  size_t begin = line.find_first_not_of(" \t\r\n");
  size_t end = line.find_last_not_of(" \t\r\n");
  if (begin == std::string::npos) return Error{"token file " + path + " holds no token"};
  return line.substr(begin, end - begin + 1);
}

std::optional<std::string> AccessPolicy::CheckAuthorization(std::string_view header) const {
  if (!token_) return std::nullopt;
  constexpr std::string_view kPrefix = "Bearer ";
  if (header.substr(0, kPrefix.size()) != kPrefix) {
    return std::string("missing 'Authorization: Bearer <token>' header");
  }
  if (!ConstantTimeEquals(header.substr(kPrefix.size()), *token_)) {
    return std::string("invalid bearer token");
  }
  return std::nullopt;
}

std::optional<std::string> AccessPolicy::CheckFrequencyChange() const {
  if (token_ || loopback_only_) return std::nullopt;
  return std::string(
      "this server listens beyond loopback without --token-file, so endpoints that change a "
      "job's frequencies are disabled; restart it with --token-file");
}

}  // namespace wattcut::server
