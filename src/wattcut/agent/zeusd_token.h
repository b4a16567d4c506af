// zeusd's tokens (issue 29): the JSON Web Tokens Zeus's daemon takes, so that a node whose agent
// speaks zeusd's API accepts the tokens its users already hold, and `wattcut agent token` issues
// tokens zeusd would accept.
//
// A token is a JWS in compact form (RFC 7515), HMAC-SHA256 ("HS256") only, over the raw bytes of
// the signing key file (not trimmed, not decoded: a trailing newline is part of the key, as zeusd
// reads it). Its claims: `sub` (a name, required), `scopes` (zeusd's API groups, required, may be
// empty) and `exp` (Unix seconds, optional: without it the token never expires). A token is
// checked in zeusd's order: its form, its header (alg HS256), its signature (compared in constant
// time), then its claims; any `aud` claim refuses it (no audience is configured), and it has
// expired when exp is more than 60 s past (zeusd's leeway). Refusals carry zeusd's messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::agent {

// zeusd's API groups, which are also its token scopes.
enum class ZeusdGroup { kGpuControl, kGpuRead, kCpuRead };

// "gpu-control", "gpu-read", "cpu-read".
std::string_view ZeusdGroupName(ZeusdGroup group);
std::optional<ZeusdGroup> ZeusdGroupFromName(std::string_view name);
// "gpu-control,cpu-read" -> the groups, in the order given (repeats kept); an unknown name is an
// error naming it and the three known ones.
Result<std::vector<ZeusdGroup>> ParseZeusdGroups(std::string_view comma_separated);

struct ZeusdClaims {
  std::string sub;
  std::vector<ZeusdGroup> scopes;
  std::optional<int64_t> exp_unix_s;
  bool Has(ZeusdGroup group) const;
};

// The HMAC key: the whole content of a file readable by its owner only (ReadSecretFile), not empty.
class ZeusdSigningKey {
 public:
  static Result<ZeusdSigningKey> ReadFile(const std::string& path);
  static Result<ZeusdSigningKey> FromBytes(std::string bytes);
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// A signed token with these claims (header {"typ":"JWT","alg":"HS256"}; claims in the order sub,
// scopes, exp; exp left out when there is none).
std::string IssueZeusdToken(const ZeusdClaims& claims, const ZeusdSigningKey& key);

// The claims of `token` at `now_unix_s`, or why not, as zeusd says it: "Invalid token:
// InvalidToken" (not three parts), "Invalid token: Base64 error: ...", "Invalid token: JSON error:
// ...", "Invalid token: InvalidAlgorithm", "Invalid token: InvalidSignature", "Invalid token:
// InvalidAudience", "Token has expired." (code kPermissionDenied for each: an HTTP 401).
Result<ZeusdClaims> VerifyZeusdToken(std::string_view token, const ZeusdSigningKey& key, int64_t now_unix_s);

// `--expires`: "1h", "30m", "7d", "2weeks", ... (a count and a unit: s, m, h, d, w, or their
// names), "never" or "0" (no expiry: nullopt). Seconds, or zeusd's message for anything else.
Result<std::optional<int64_t>> ParseZeusdTokenLifetime(std::string_view text);

}  // namespace wattcut::agent
