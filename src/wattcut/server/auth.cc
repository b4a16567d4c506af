#include "wattcut/server/auth.h"

#include <string>

#include "wattcut/http/bearer_token.h"

namespace wattcut::server {

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
