#include "wattcut/server/auth.h"

#include <fstream>
#include <string>

#include "wattcut/http/bearer_token.h"

namespace wattcut::server {

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
  const std::optional<std::string_view> credentials = http::BearerCredentials(header);
  if (!credentials) return std::string("missing 'Authorization: Bearer <token>' header");
  if (!http::ConstantTimeEquals(*credentials, *token_)) {
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
