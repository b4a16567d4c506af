#include "wattcut/agent/agent_tokens.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace wattcut::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kRowToken = "3f9c0d51a7e2b8c46f1d9e03a5b7c2e8";
constexpr const char* kTrainToken = "9d2e6b1f0c8a4e7d3b5f9a1c6e2d8b40";
constexpr const char* kReadToken = "read-only-token-0123456789";

TEST(AgentScope, TrainAndRowIncludeReadButNotEachOther) {
  EXPECT_TRUE(ScopeAllows(AgentScope::kRead, AgentScope::kRead));
  EXPECT_FALSE(ScopeAllows(AgentScope::kRead, AgentScope::kTrain));
  EXPECT_FALSE(ScopeAllows(AgentScope::kRead, AgentScope::kRow));
  EXPECT_TRUE(ScopeAllows(AgentScope::kTrain, AgentScope::kRead));
  EXPECT_TRUE(ScopeAllows(AgentScope::kTrain, AgentScope::kTrain));
  EXPECT_FALSE(ScopeAllows(AgentScope::kTrain, AgentScope::kRow));
  EXPECT_TRUE(ScopeAllows(AgentScope::kRow, AgentScope::kRead));
  EXPECT_TRUE(ScopeAllows(AgentScope::kRow, AgentScope::kRow));
  EXPECT_FALSE(ScopeAllows(AgentScope::kRow, AgentScope::kTrain));
}

TEST(AgentScope, NamesGoBothWays) {
  for (AgentScope scope : {AgentScope::kRead, AgentScope::kTrain, AgentScope::kRow}) {
    EXPECT_EQ(AgentScopeFromName(AgentScopeName(scope)), scope);
  }
  EXPECT_FALSE(AgentScopeFromName("Row").has_value());
  EXPECT_FALSE(AgentScopeFromName("admin").has_value());
}

TEST(AgentTokens, ParsesScopesCommentsBlankLinesAndCrlf) {
  std::string text = std::string("# the row controller\n\n   \nrow ") + kRowToken + "\r\n\ttrain\t" + kTrainToken +
                     "  \n  # indented comment\nread " + kReadToken;  // no final newline
  auto tokens = AgentTokens::Parse(text, "agent.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_EQ(tokens->size(), 3u);

  auto row = tokens->Find(kRowToken);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->scope, AgentScope::kRow);
  EXPECT_EQ(row->line, 4);
  auto train = tokens->Find(kTrainToken);
  ASSERT_TRUE(train.has_value());
  EXPECT_EQ(train->scope, AgentScope::kTrain);
  EXPECT_EQ(train->line, 5);
  auto read = tokens->Find(kReadToken);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->scope, AgentScope::kRead);
  EXPECT_EQ(read->line, 7);
}

TEST(AgentTokens, FindsOnlyTheWholeToken) {
  auto tokens = AgentTokens::Parse(std::string("row ") + kRowToken + "\n", "f");
  ASSERT_TRUE(tokens.ok());
  std::string token = kRowToken;
  EXPECT_FALSE(tokens->Find("").has_value());
  EXPECT_FALSE(tokens->Find(token.substr(0, token.size() - 1)).has_value());
  EXPECT_FALSE(tokens->Find(token + "0").has_value());
  std::string changed = token;
  changed[0] = 'X';
  EXPECT_FALSE(tokens->Find(changed).has_value());
  std::string upper = token;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(tokens->Find(upper).has_value());
  EXPECT_TRUE(tokens->Find(token).has_value());
}

TEST(AgentTokens, TheLastTokenOfAFileIsFoundLikeTheFirst) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "read token-number-" + std::to_string(100 + i) + "-abcdef\n";
  auto tokens = AgentTokens::Parse(text, "f");
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  auto first = tokens->Find("token-number-100-abcdef");
  auto last = tokens->Find("token-number-119-abcdef");
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(first->line, 1);
  EXPECT_EQ(last->line, 20);
}

struct BadFile {
  std::string text;
  std::string expected;
};

TEST(AgentTokens, RefusesBadLinesNamingFileLineAndWhatWasExpected) {
  std::string good = std::string("row ") + kRowToken + "\n";
  const BadFile cases[] = {
      {good + "admin " + kTrainToken + "\n", "agent.tokens:2: unknown scope 'admin'; expected 'SCOPE TOKEN'"},
      {"# c\ntrain\n", "agent.tokens:2: scope 'train' without a token; expected 'SCOPE TOKEN'"},
      {good + "read short\n", "agent.tokens:2: the token has 5 characters; expected at least 16"},
      {good + "read " + kRowToken + "\n", "agent.tokens:2: the same token as line 1"},
      {good + "read " + kTrainToken + " # trailing comment\n",
       "agent.tokens:2: expected 'SCOPE TOKEN' (2 fields), got 5"},
      {"read token\x01with-control-byte\n", "agent.tokens:1: the token holds a byte outside printable ASCII"},
      {"", "agent.tokens: no token; expected one 'SCOPE TOKEN' line"},
      {"# only comments\n\n", "agent.tokens: no token"},
      {"\x1b[2J " + std::string(kRowToken), "agent.tokens:1: an unknown scope (not shown: it may be a token)"},
      {good + kTrainToken + "\n", "agent.tokens:2: one field and no scope (not shown: it may be a token)"},
  };
  for (const BadFile& c : cases) {
    auto tokens = AgentTokens::Parse(c.text, "agent.tokens");
    ASSERT_FALSE(tokens.ok()) << c.text;
    EXPECT_THAT(tokens.error().message, HasSubstr(c.expected)) << c.text;
    EXPECT_EQ(tokens.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(AgentTokens, MessagesNeverQuoteAToken) {
  std::string secret = "s3cret-token-do-not-log";
  const std::string files[] = {
      "row " + secret + "\nread " + secret + "\n",  // duplicate
      "row " + secret + " extra\n",                 // three fields
      "row " + secret + "\x7f\n",                   // DEL
      secret + "\n",                                // the scope left out: the token alone
      secret + " row\n",                            // the fields swapped
      "s3cret row\n",                               // a part of one, lowercase letters and digits
  };
  for (const std::string& text : files) {
    auto tokens = AgentTokens::Parse(text, "f");
    ASSERT_FALSE(tokens.ok());
    // No run of 6 of the secret's characters appears (the 64-character token once showed 32).
    for (size_t at = 0; at + 6 <= secret.size(); ++at) {
      EXPECT_THAT(tokens.error().message, Not(HasSubstr(secret.substr(at, 6)))) << tokens.error().message;
    }
  }
}

class TokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattcut_agent_tokens_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text, mode_t mode) {
    std::string path = (dir_ / "agent.tokens").string();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(TokenFile, ReadsAFileOnlyItsOwnerCanAccess) {
  std::string path = Write(std::string("row ") + kRowToken + "\n", 0600);
  auto tokens = AgentTokens::ReadFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_TRUE(tokens->Find(kRowToken).has_value());
  EXPECT_TRUE(AgentTokens::ReadFile(Write(std::string("row ") + kRowToken + "\n", 0400)).ok());
}

TEST_F(TokenFile, RefusesAFileGroupOrOthersCanAccess) {
  for (mode_t mode : {0640, 0604, 0644, 0660, 0602}) {
    std::string path = Write(std::string("row ") + kRowToken + "\n", mode);
    auto tokens = AgentTokens::ReadFile(path);
    ASSERT_FALSE(tokens.ok()) << std::oct << mode;
    EXPECT_THAT(tokens.error().message, HasSubstr("accessible by group or others"));
    EXPECT_THAT(tokens.error().message, HasSubstr("chmod 600 " + path));
  }
}

TEST_F(TokenFile, ParseErrorsNameThePath) {
  std::string path = Write("row short\n", 0600);
  auto tokens = AgentTokens::ReadFile(path);
  ASSERT_FALSE(tokens.ok());
  EXPECT_THAT(tokens.error().message, HasSubstr(path + ":1: the token has 5 characters"));
}

TEST_F(TokenFile, RefusesAMissingFileAndADirectory) {
  auto missing = AgentTokens::ReadFile((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("cannot open token file"));
  ::chmod(dir_.c_str(), 0700);
  auto directory = AgentTokens::ReadFile(dir_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr("is not a regular file"));
}

}  // namespace
}  // namespace wattcut::agent
