// Who may call the server. With a token file, every request must carry
// "Authorization: Bearer <token>" (the scheme in any case, RFC 7235; the token compared in
// constant time). Without one, a server
// that listens beyond loopback refuses every endpoint that changes a job's
// frequencies: anyone who can reach it could otherwise slow a cluster down.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "wattcut/base/result.h"
#include "wattcut/http/token_file.h"

namespace wattcut::server {

// The token file of --token-file (its first line), read as every wattcut service reads one.
using http::ReadTokenFile;

class AccessPolicy {
 public:
  AccessPolicy(std::optional<std::string> token, bool loopback_only)
      : token_(std::move(token)), loopback_only_(loopback_only) {}

  // nullopt when the request may go on; otherwise the reason for a 401.
  std::optional<std::string> CheckAuthorization(std::string_view authorization_header) const;
  // nullopt when a frequency-changing request may go on; otherwise the reason for a 403.
  std::optional<std::string> CheckFrequencyChange() const;

  bool has_token() const { return token_.has_value(); }

 private:
  std::optional<std::string> token_;
  bool loopback_only_;
};

}  // namespace wattcut::server
