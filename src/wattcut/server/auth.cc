#include "wattcut/server/auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fstream>
#include <string>

namespace wattcut::server {

namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (EqualsIgnoringCase(host, "localhost")) return true;
  // Numeric addresses only: a name such as "127.evil.example" is whatever DNS says it is.
  std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

bool IsLoopbackAddress(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
    return (ntohl(v4.sin_addr.s_addr) >> 24) == 127;
  }
  if (address.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
    return IN6_IS_ADDR_LOOPBACK(&v6.sin6_addr);
  }
  return false;
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
  // RFC 7235: the scheme is case-insensitive and separated from the credentials by spaces.
  constexpr std::string_view kScheme = "bearer";
  if (header.size() <= kScheme.size() || !EqualsIgnoringCase(header.substr(0, kScheme.size()), kScheme) ||
      header[kScheme.size()] != ' ') {
    return std::string("missing 'Authorization: Bearer <token>' header");
  }
  std::string_view credentials = header.substr(kScheme.size());
  while (!credentials.empty() && credentials.front() == ' ') credentials.remove_prefix(1);
  while (!credentials.empty() && (credentials.back() == ' ' || credentials.back() == '\t')) {
    credentials.remove_suffix(1);
  }
  if (!ConstantTimeEquals(credentials, *token_)) {
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
