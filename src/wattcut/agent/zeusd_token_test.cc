#include "wattcut/agent/zeusd_token.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace wattcut::agent {
namespace {

ZeusdSigningKey Key(const std::string& bytes = "a secret of the node\n") { return *ZeusdSigningKey::FromBytes(bytes); }

constexpr int64_t kNow = 1'780'000'000;

std::string MessageOf(std::string_view token, const ZeusdSigningKey& key, int64_t now = kNow) {
  auto verified = VerifyZeusdToken(token, key, now);
  if (verified.ok()) return "ok";
  EXPECT_EQ(verified.error().code, ErrorCode::kPermissionDenied);
  return verified.error().message;
}

// RFC 7515 appendix A.1: an HS256 JWS and its key. Its claims are not zeusd's (no sub), so the
// answer after a good signature is the missing claim, not InvalidSignature.
TEST(ZeusdToken, ChecksTheSignatureOfRfc7515sExample) {
  const std::string key_bytes(
      "\x03\x23\x35\x4b\x2b\x0f\xa5\xbc\x83\x7e\x06\x65\x77\x7b\xa6\x8f\x5a\xb3\x28\xe6\xf0\x54\xc9\x28\xa9\x0f\x84"
      "\xb2\xd2\x50\x2e\xbf\xd3\xfb\x5a\x92\xd2\x06\x47\xef\x96\x8a\xb4\xc3\x77\x62\x3d\x22\x3d\x2e\x21\x72\x05\x2e"
      "\x4f\x08\xc0\xcd\x9a\xf5\x67\xd0\x80\xa3",
      64);
  const std::string token =
      "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFt"
      "cGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  EXPECT_EQ(MessageOf(token, Key(key_bytes)), "Invalid token: JSON error: missing field `sub`");
  EXPECT_EQ(MessageOf(token, Key("another key")), "Invalid token: InvalidSignature");
}

TEST(ZeusdToken, IssuedTokensVerifyWithTheirClaims) {
  ZeusdClaims claims{"alice", {ZeusdGroup::kGpuRead, ZeusdGroup::kCpuRead}, kNow + 3600};
  const std::string token = IssueZeusdToken(claims, Key());
  auto verified = VerifyZeusdToken(token, Key(), kNow);
  ASSERT_TRUE(verified.ok()) << verified.error().message;
  EXPECT_EQ(verified->sub, "alice");
  EXPECT_TRUE(verified->Has(ZeusdGroup::kGpuRead));
  EXPECT_TRUE(verified->Has(ZeusdGroup::kCpuRead));
  EXPECT_FALSE(verified->Has(ZeusdGroup::kGpuControl));
  EXPECT_EQ(verified->exp_unix_s, kNow + 3600);
  // No exp: never expires; no scopes: a valid token that may do nothing.
  const std::string forever = IssueZeusdToken({"bob", {}, std::nullopt}, Key());
  auto bob = VerifyZeusdToken(forever, Key(), kNow + 100LL * 365 * 86400);
  ASSERT_TRUE(bob.ok());
  EXPECT_TRUE(bob->scopes.empty());
  EXPECT_FALSE(bob->exp_unix_s.has_value());
  // The key is the file's bytes: without its newline it is another key.
  EXPECT_EQ(MessageOf(token, Key("a secret of the node")), "Invalid token: InvalidSignature");
}

TEST(ZeusdToken, ExpiresSixtySecondsAfterExp) {
  const std::string token = IssueZeusdToken({"carol", {ZeusdGroup::kGpuControl}, kNow}, Key());
  EXPECT_EQ(MessageOf(token, Key(), kNow + 60), "ok");
  EXPECT_EQ(MessageOf(token, Key(), kNow + 61), "Token has expired.");
}

// Unpadded base64url, written here independently of the code under test.
std::string Encode(const std::string& s) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    const size_t n = std::min<size_t>(3, s.size() - i);
    uint32_t v = 0;
    for (size_t k = 0; k < 3; ++k) v = (v << 8) | (k < n ? static_cast<uint8_t>(s[i + k]) : 0);
    for (size_t k = 0; k <= n; ++k) out += kAlphabet[(v >> (18 - 6 * k)) & 63];
  }
  return out;
}

// "header.claims" of a token, to which a test appends a signature.
std::string Assemble(const std::string& header, const std::string& claims) {
  return Encode(header) + "." + Encode(claims);
}

// HS256 of `signed_part` with `key`, base64url without padding: a token signed as the agent signs.
std::string Sign(const std::string& signed_part, const ZeusdSigningKey& key) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.bytes().data(), static_cast<int>(key.bytes().size()),
       reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size(), mac, &length);
  std::string encoded = Encode(std::string(reinterpret_cast<const char*>(mac), length));
  while (!encoded.empty() && encoded.back() == '=') encoded.pop_back();
  return encoded;
}

TEST(ZeusdToken, RefusesMalformedTokensWithZeusdsMessages) {
  const ZeusdSigningKey key = Key();
  EXPECT_EQ(MessageOf("", key), "Invalid token: InvalidToken");
  EXPECT_EQ(MessageOf("a.b", key), "Invalid token: InvalidToken");
  EXPECT_EQ(MessageOf("a.b.c.d", key), "Invalid token: InvalidToken");
  EXPECT_EQ(MessageOf("a!.b.c", key).rfind("Invalid token: Base64 error:", 0), 0u);
  EXPECT_EQ(MessageOf(Assemble("not json", "{}") + ".sig", key).rfind("Invalid token: JSON error:", 0), 0u);
  EXPECT_EQ(MessageOf(Assemble(R"({"alg":"HS512"})", "{}") + ".sig", key), "Invalid token: InvalidAlgorithm");
  EXPECT_EQ(MessageOf(Assemble(R"({"alg":"RS256"})", "{}") + ".sig", key), "Invalid token: InvalidAlgorithm");
  EXPECT_EQ(MessageOf(Assemble(R"({"alg":"none"})", "{}") + ".", key),
            "Invalid token: JSON error: unknown variant `none`");
  EXPECT_EQ(MessageOf(Assemble(R"({"typ":"JWT"})", "{}") + ".sig", key),
            "Invalid token: JSON error: missing field `alg`");
  // A key given twice, in the header or the claims, is refused before the signature is looked at
  // (before: a correctly signed header with "alg" twice was accepted, the last one kept).
  EXPECT_EQ(MessageOf(Assemble(R"({"alg":"none","alg":"HS256"})", R"({"sub":"x","scopes":[]})") + ".sig", key),
            "Invalid token: JSON error: field 'alg' appears twice");
  const std::string twice = Assemble(R"({"alg":"HS256"})", R"({"sub":"x","sub":"root","scopes":["gpu-read"]})");
  EXPECT_EQ(MessageOf(twice + "." + Sign(twice, key), key), "Invalid token: JSON error: field 'sub' appears twice")
      << "correctly signed";
  // A good header with a signature that is not the key's.
  EXPECT_EQ(MessageOf(Assemble(R"({"alg":"HS256"})", R"({"sub":"x","scopes":[]})") + ".AAAA", key),
            "Invalid token: InvalidSignature");
  // A tampered payload: the issued signature no longer matches.
  const std::string good = IssueZeusdToken({"dave", {ZeusdGroup::kGpuRead}, std::nullopt}, key);
  const size_t dot = good.find('.');
  const std::string tampered =
      good.substr(0, dot) + "." + Encode(R"({"sub":"dave","scopes":["gpu-control"]})") + good.substr(good.rfind('.'));
  EXPECT_EQ(MessageOf(tampered, key), "Invalid token: InvalidSignature");
}

TEST(ZeusdTokenLifetime, ParsesZeusdsDurations) {
  EXPECT_EQ(*ParseZeusdTokenLifetime("1h"), 3600);
  EXPECT_EQ(*ParseZeusdTokenLifetime(" 7D "), 7 * 86400);
  EXPECT_EQ(*ParseZeusdTokenLifetime("30d"), 30 * 86400);
  EXPECT_EQ(*ParseZeusdTokenLifetime("2weeks"), 14 * 86400);
  EXPECT_EQ(*ParseZeusdTokenLifetime("90min"), 5400);
  EXPECT_FALSE(ParseZeusdTokenLifetime("never")->has_value());
  EXPECT_FALSE(ParseZeusdTokenLifetime("0")->has_value());
  for (const char* bad : {"", "h", "-1h", "1 fortnight", "1.5h", "99999999999999w"}) {
    auto parsed = ParseZeusdTokenLifetime(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().message,
              std::string("Invalid duration '") + bad + "'. Use e.g. '1h', '7d', '30d', or 'never'.");
  }
}

TEST(ZeusdGroups, ParseNamesAndRefuseUnknownOnes) {
  auto groups = ParseZeusdGroups("gpu-control, cpu-read");
  ASSERT_TRUE(groups.ok());
  EXPECT_EQ(*groups, (std::vector<ZeusdGroup>{ZeusdGroup::kGpuControl, ZeusdGroup::kCpuRead}));
  EXPECT_TRUE(ParseZeusdGroups("")->empty());
  auto bad = ParseZeusdGroups("gpu-read,gpu-write");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'gpu-write'"), std::string::npos);
}

TEST(ZeusdSigningKey, IsRefusedWhenOthersCanReadItOrWhenEmpty) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("wattcut_zeusd_key_" + std::to_string(::getpid()))).string();
  { std::ofstream(path) << "k3y\n"; }
  ::chmod(path.c_str(), 0644);
  auto open = ZeusdSigningKey::ReadFile(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message.find("chmod 600"), std::string::npos);
  ::chmod(path.c_str(), 0600);
  auto key = ZeusdSigningKey::ReadFile(path);
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(key->bytes(), "k3y\n");
  { std::ofstream(path, std::ios::trunc); }
  auto empty = ZeusdSigningKey::ReadFile(path);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace wattcut::agent
