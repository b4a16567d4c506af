// `wattcut agent token` as a user runs it: a token that verifies with the same key and carries the
// claims asked for, and clear refusals (an unknown scope, a bad lifetime, a key others can read).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "tests/cli/command_runner.h"
#include "wattcut/agent/zeusd_token.h"

namespace wattcut {
namespace {

using testing::RunWattcut;

std::string WriteKey(const testing::TempDir& dir, const std::string& bytes, mode_t mode) {
  const std::string path = dir.path() + "/zeusd.key";
  std::ofstream(path, std::ios::trunc) << bytes;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(AgentTokenCommand, IssuesATokenWithTheClaimsAskedFor) {
  testing::TempDir dir;
  const std::string key_path = WriteKey(dir, "node secret\n", 0600);
  auto result =
      RunWattcut("agent token --signing-key " + key_path + " --sub alice --scopes gpu-control,cpu-read --expires 2h");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_FALSE(result.out.empty());
  EXPECT_EQ(result.out.back(), '\n');
  const std::string token = result.out.substr(0, result.out.size() - 1);
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto key = agent::ZeusdSigningKey::FromBytes("node secret\n");
  auto claims = agent::VerifyZeusdToken(token, *key, now_s);
  ASSERT_TRUE(claims.ok()) << claims.error().message;
  EXPECT_EQ(claims->sub, "alice");
  EXPECT_EQ(claims->scopes,
            (std::vector<agent::ZeusdGroup>{agent::ZeusdGroup::kGpuControl, agent::ZeusdGroup::kCpuRead}));
  ASSERT_TRUE(claims->exp_unix_s.has_value());
  EXPECT_NEAR(static_cast<double>(*claims->exp_unix_s - now_s), 7200, 120);
  EXPECT_EQ(agent::VerifyZeusdToken(token, *key, now_s + 7200 + 200).error().message, "Token has expired.");

  auto forever = RunWattcut("agent token --signing-key " + key_path + " --sub bob");
  ASSERT_EQ(forever.exit_code, 0) << forever.err;
  auto bob = agent::VerifyZeusdToken(forever.out.substr(0, forever.out.size() - 1), *key, now_s);
  ASSERT_TRUE(bob.ok());
  EXPECT_TRUE(bob->scopes.empty());
  EXPECT_FALSE(bob->exp_unix_s.has_value());
}

TEST(AgentTokenCommand, RefusesWhatIsWrongSayingWhich) {
  testing::TempDir dir;
  const std::string key_path = WriteKey(dir, "node secret\n", 0600);
  auto scope = RunWattcut("agent token --signing-key " + key_path + " --sub a --scopes gpu-read,gpu-write");
  EXPECT_EQ(scope.exit_code, 1);
  EXPECT_NE(scope.err.find("--scopes: unknown zeusd API group 'gpu-write'"), std::string::npos) << scope.err;
  EXPECT_TRUE(scope.out.empty());
  auto lifetime = RunWattcut("agent token --signing-key " + key_path + " --sub a --expires soon");
  EXPECT_EQ(lifetime.exit_code, 1);
  EXPECT_NE(lifetime.err.find("Invalid duration 'soon'"), std::string::npos) << lifetime.err;
  ::chmod(key_path.c_str(), 0640);
  auto readable = RunWattcut("agent token --signing-key " + key_path + " --sub a");
  EXPECT_EQ(readable.exit_code, 1);
  EXPECT_NE(readable.err.find("chmod 600"), std::string::npos) << readable.err;
  auto missing = RunWattcut("agent token --sub a");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("--signing-key"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace wattcut
