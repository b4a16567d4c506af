#include "wattcut/agent/zeusd_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_tokens.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::agent {
namespace {

constexpr std::array<ZeusdGroup, 3> kGroups = {ZeusdGroup::kGpuControl, ZeusdGroup::kGpuRead, ZeusdGroup::kCpuRead};

// A refusal: HTTP 401 with zeusd's text.
Error Refused(std::string message) { return Error::PermissionDenied(std::move(message)); }

// Unpadded base64url (RFC 4648 section 5), as JWS writes every part: OpenSSL's base64 with the
// two characters swapped and the padding taken off.
std::string Base64UrlEncode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : (c == '/' ? '_' : c);
  return out;
}

Result<std::string> Base64UrlDecode(std::string_view text) {
  std::string standard(text);
  for (size_t i = 0; i < standard.size(); ++i) {
    char& c = standard[i];
    if (c == '-') {
      c = '+';
    } else if (c == '_') {
      c = '/';
    } else if (!std::isalnum(static_cast<unsigned char>(c))) {
      return Refused("Invalid token: Base64 error: Invalid symbol " + std::to_string(static_cast<unsigned char>(c)) +
                     ", offset " + std::to_string(i) + ".");
    }
  }
  if (standard.size() % 4 == 1) return Refused("Invalid token: Base64 error: Invalid input length.");
  const size_t padding = (4 - standard.size() % 4) % 4;
  standard.append(padding, '=');
  std::string out(standard.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(standard.data()), static_cast<int>(standard.size()));
  if (n < 0) return Refused("Invalid token: Base64 error: Invalid input.");
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

std::string Signature(std::string_view signed_part, const ZeusdSigningKey& key) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.bytes().data(), static_cast<int>(key.bytes().size()),
       reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(), mac, &length);
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(mac), length));
}

Result<nlohmann::json> JsonPart(std::string_view encoded) {
  Result<std::string> text = Base64UrlDecode(encoded);
  if (!text.ok()) return text.error();
  // A key given twice is refused, signed or not: which "alg" or "exp" a parser keeps differs
  // between libraries, so a token must not depend on it.
  Result<nlohmann::json> json = ParseJsonWithoutDuplicateKeys(*text);
  if (!json.ok()) {
    const bool twice = json.error().message.find("appears twice") != std::string::npos;
    return Refused(std::string("Invalid token: JSON error: ") +
                   (twice ? PrintableText(json.error().message.substr(json.error().message.find("field")), 80)
                          : std::string("not a JSON document")));
  }
  if (!json->is_object()) return Refused("Invalid token: JSON error: expected a JSON object");
  return std::move(*json);
}

Status CheckHeader(const nlohmann::json& header) {
  static const std::array<std::string_view, 12> kKnown = {"HS256", "HS384", "HS512", "ES256", "ES384", "RS256",
                                                          "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"};
  auto alg = header.find("alg");
  if (alg == header.end()) return Refused("Invalid token: JSON error: missing field `alg`");
  if (!alg->is_string()) return Refused("Invalid token: JSON error: `alg` must be a string");
  const std::string name = alg->get<std::string>();
  if (std::find(kKnown.begin(), kKnown.end(), name) == kKnown.end()) {
    return Refused("Invalid token: JSON error: unknown variant `" + name.substr(0, 32) + "`");
  }
  if (name != "HS256") return Refused("Invalid token: InvalidAlgorithm");
  return Status::Ok();
}

Result<ZeusdClaims> ReadClaims(const nlohmann::json& json) {
  ZeusdClaims claims;
  auto sub = json.find("sub");
  if (sub == json.end()) return Refused("Invalid token: JSON error: missing field `sub`");
  if (!sub->is_string()) return Refused("Invalid token: JSON error: `sub` must be a string");
  claims.sub = sub->get<std::string>();
  auto scopes = json.find("scopes");
  if (scopes == json.end()) return Refused("Invalid token: JSON error: missing field `scopes`");
  if (!scopes->is_array()) return Refused("Invalid token: JSON error: `scopes` must be an array");
  for (const nlohmann::json& s : *scopes) {
    std::optional<ZeusdGroup> group = s.is_string() ? ZeusdGroupFromName(s.get<std::string>()) : std::nullopt;
    if (!group) {
      return Refused("Invalid token: JSON error: unknown scope " + JsonPreview(s, 40) +
                     ", expected one of `gpu-control`, `gpu-read`, `cpu-read`");
    }
    claims.scopes.push_back(*group);
  }
  auto exp = json.find("exp");
  if (exp != json.end()) {
    if (!exp->is_number_unsigned() || exp->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Refused("Invalid token: JSON error: `exp` must be an integer of Unix seconds");
    }
    claims.exp_unix_s = exp->get<int64_t>();
  }
  if (json.contains("aud")) return Refused("Invalid token: InvalidAudience");
  return claims;
}

}  // namespace

std::string_view ZeusdGroupName(ZeusdGroup group) {
  switch (group) {
    case ZeusdGroup::kGpuControl:
      return "gpu-control";
    case ZeusdGroup::kGpuRead:
      return "gpu-read";
    case ZeusdGroup::kCpuRead:
      return "cpu-read";
  }
  return "gpu-read";
}

std::optional<ZeusdGroup> ZeusdGroupFromName(std::string_view name) {
  for (ZeusdGroup g : kGroups) {
    if (name == ZeusdGroupName(g)) return g;
  }
  return std::nullopt;
}

Result<std::vector<ZeusdGroup>> ParseZeusdGroups(std::string_view comma_separated) {
  std::vector<ZeusdGroup> groups;
  size_t begin = 0;
  while (begin <= comma_separated.size()) {
    size_t end = comma_separated.find(',', begin);
    if (end == std::string_view::npos) end = comma_separated.size();
    std::string_view name = comma_separated.substr(begin, end - begin);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) {
      std::optional<ZeusdGroup> group = ZeusdGroupFromName(name);
      if (!group) {
        return Error{"unknown zeusd API group '" + std::string(name.substr(0, 40)) +
                     "': expected gpu-control, gpu-read or cpu-read"};
      }
      groups.push_back(*group);
    }
    begin = end + 1;
  }
  return groups;
}

bool ZeusdClaims::Has(ZeusdGroup group) const { return std::find(scopes.begin(), scopes.end(), group) != scopes.end(); }

Result<ZeusdSigningKey> ZeusdSigningKey::ReadFile(const std::string& path) {
  Result<std::string> bytes = ReadSecretFile(path, "zeusd signing key file");
  if (!bytes.ok()) return bytes.error();
  Result<ZeusdSigningKey> key = FromBytes(std::move(*bytes));
  if (!key.ok()) return key.error().WithContext(path + ": ");
  return key;
}

Result<ZeusdSigningKey> ZeusdSigningKey::FromBytes(std::string bytes) {
  if (bytes.empty()) return Error{"the zeusd signing key is empty (e.g. openssl rand -base64 32 > FILE)"};
  ZeusdSigningKey key;
  key.bytes_ = std::move(bytes);
  return key;
}

std::string IssueZeusdToken(const ZeusdClaims& claims, const ZeusdSigningKey& key) {
  // Written by hand so that the claims keep zeusd's order (nlohmann's object sorts its keys).
  nlohmann::json scopes = nlohmann::json::array();
  for (ZeusdGroup g : claims.scopes) scopes.push_back(std::string(ZeusdGroupName(g)));
  std::string payload = "{\"sub\":" + nlohmann::json(claims.sub).dump() + ",\"scopes\":" + scopes.dump();
  if (claims.exp_unix_s) payload += ",\"exp\":" + std::to_string(*claims.exp_unix_s);
  payload += "}";
  const std::string signed_part = Base64UrlEncode(R"({"typ":"JWT","alg":"HS256"})") + "." + Base64UrlEncode(payload);
  return signed_part + "." + Signature(signed_part, key);
}

Result<ZeusdClaims> VerifyZeusdToken(std::string_view token, const ZeusdSigningKey& key, int64_t now_unix_s) {
  const size_t first = token.find('.');
  const size_t second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (token.empty() || second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return Refused("Invalid token: InvalidToken");
  }
  Result<nlohmann::json> header = JsonPart(token.substr(0, first));
  if (!header.ok()) return header.error();
  if (Status alg = CheckHeader(*header); !alg.ok()) return alg.error();
  const std::string expected = Signature(token.substr(0, second), key);
  const std::string_view presented = token.substr(second + 1);
  if (presented.size() != expected.size() || CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) != 0) {
    return Refused("Invalid token: InvalidSignature");
  }
  Result<nlohmann::json> payload = JsonPart(token.substr(first + 1, second - first - 1));
  if (!payload.ok()) return payload.error();
  Result<ZeusdClaims> claims = ReadClaims(*payload);
  if (!claims.ok()) return claims.error();
  constexpr int64_t kLeewayS = 60;
  if (claims->exp_unix_s && *claims->exp_unix_s < now_unix_s - kLeewayS) return Refused("Token has expired.");
  return claims;
}

Result<std::optional<int64_t>> ParseZeusdTokenLifetime(std::string_view text) {
  std::string value(text);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  size_t start = 0;
  while (start < value.size() && std::isspace(static_cast<unsigned char>(value[start]))) ++start;
  value = value.substr(start);
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  const Error refused{"Invalid duration '" + std::string(text.substr(0, 40)) +
                      "'. Use e.g. '1h', '7d', '30d', or 'never'."};
  if (value == "never" || value == "0") return std::optional<int64_t>();
  int64_t count = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (ec != std::errc() || end == value.data() || count <= 0) return refused;
  std::string unit = value.substr(static_cast<size_t>(end - value.data()));
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  struct Unit {
    std::string_view names[5];
    int64_t seconds;
  };
  static const Unit kUnits[] = {
      {{"s", "sec", "secs", "second", "seconds"}, 1}, {{"m", "min", "mins", "minute", "minutes"}, 60},
      {{"h", "hr", "hrs", "hour", "hours"}, 3600},    {{"d", "day", "days", "", ""}, 86400},
      {{"w", "week", "weeks", "", ""}, 7 * 86400},
  };
  for (const Unit& u : kUnits) {
    for (std::string_view name : u.names) {
      if (!name.empty() && unit == name) {
        constexpr int64_t kMaxS = 100LL * 366 * 86400;  // a century: past it, say never
        if (count > kMaxS / u.seconds) return refused;
        return std::optional<int64_t>(count * u.seconds);
      }
    }
  }
  return refused;
}

}  // namespace wattcut::agent
