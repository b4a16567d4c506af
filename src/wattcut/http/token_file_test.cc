#include "wattcut/http/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace wattcut::http {
namespace {

using ::testing::HasSubstr;

class TokenFileTest : public ::testing::Test {
 protected:
  TokenFileTest() : folder_((std::filesystem::temp_directory_path() / "wctoken-XXXXXX").string()) {
    if (::mkdtemp(folder_.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  }
  ~TokenFileTest() override { std::filesystem::remove_all(folder_); }
  std::string Write(const std::string& text) {
    std::string path = folder_ + "/token";
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string folder_;
};

TEST_F(TokenFileTest, TheFirstLineIsTheTokenWithoutSurroundingBlanks) {
  auto token = ReadTokenFile(Write("  s3cret-token\t\r\nsecond line ignored\n"));
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, "s3cret-token");
  auto last = ReadTokenFile(Write("only-line"));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, "only-line");
}

TEST_F(TokenFileTest, AnEmptyOrMissingFileIsRefused) {
  auto empty = ReadTokenFile(Write(" \t\r\nnext-line-token\n"));
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("holds no token"));
  auto missing = ReadTokenFile(folder_ + "/absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("cannot read token file " + folder_ + "/absent"));
}

TEST_F(TokenFileTest, TheFirstLineMayBeAScopeAndItsTokenAsTheAgentsTokenFileWritesThem) {
  auto token = ReadTokenFile(Write("row 3f9c0d51a7e2b8c4\n"));
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, "3f9c0d51a7e2b8c4");
}

TEST_F(TokenFileTest, AFirstLineThatIsAComment) {
  auto comment = ReadTokenFile(Write("# the planning server's\ntoken\n"));
  ASSERT_FALSE(comment.ok());
  EXPECT_EQ(comment.error().message,
            folder_ + "/token:1: the first line holds no token (expected 'TOKEN' or 'SCOPE TOKEN' on it)");
}

TEST_F(TokenFileTest, TheFirstLineWithATokenComesAfterCommentsAndBlankLines) {
  auto token = ReadTokenFile(Write("# the row controller's\n\n \t\r\ntrain  77aa \r\nread ignored\n"),
                             TokenPlace::kFirstLineWithToken);
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, "77aa");
  auto none = ReadTokenFile(Write("# nothing\n\n"), TokenPlace::kFirstLineWithToken);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, folder_ + "/token: no token in it (expected a line 'TOKEN' or 'SCOPE TOKEN')");
}

TEST_F(TokenFileTest, BadLinesAreRefusedNamingFileAndLineWithoutQuotingTheToken) {
  const std::string path = folder_ + "/token";
  EXPECT_EQ(ReadTokenFile(Write("row s3cret-token extra\n")).error().message,
            path + ":1: expected 'TOKEN' or 'SCOPE TOKEN', got 3 words");
  EXPECT_EQ(
      ReadTokenFile(Write("# c\n\nrow s3cret-token # the row's\n"), TokenPlace::kFirstLineWithToken).error().message,
      path + ":3: expected 'TOKEN' or 'SCOPE TOKEN', got 5 words; a comment takes a whole line starting with '#'");
  auto control = ReadTokenFile(Write("s3cret\x01token\n"));
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.error().message,
            path + ":1: the token holds a byte outside printable ASCII; expected printable ASCII without blanks");
  // Only the first line is read: a bad line after the token is not looked at.
  EXPECT_TRUE(ReadTokenFile(Write("s3cret-token\na b c\n")).ok());
}

TEST_F(TokenFileTest, ADirectoryAndAHugeFileAreRefused) {
  auto directory = ReadTokenFile(folder_, TokenPlace::kFirstLineWithToken, "the agent token file");
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message, "cannot read the agent token file " + folder_);
  auto huge = ReadTokenFile(Write("s3cret-token\n" + std::string(kMaxTokenFileBytes, '#')));
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.error().message, HasSubstr(folder_ + "/token: more than 1048576 bytes"));
}

TEST(TokenLines, EveryLineWithATokenInOrderWithItsScopeAndLineNumber) {
  TokenLines lines("# tokens\r\n\nrow  aaaa\r\n\tbbbb\n  # indented comment\nread cccc", "agent.tokens",
                   TokenLineForm::kScopeToken);
  std::vector<TokenLine> found;
  for (;;) {
    auto next = lines.Next();
    ASSERT_TRUE(next.ok()) << next.error().message;
    if (!next->has_value()) break;
    found.push_back(**next);
  }
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].scope, "row");
  EXPECT_EQ(found[0].token, "aaaa");
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[1].scope, "");
  EXPECT_EQ(found[1].token, "bbbb");
  EXPECT_EQ(found[1].line, 4);
  EXPECT_EQ(found[2].scope, "read");
  EXPECT_EQ(found[2].token, "cccc");
  EXPECT_EQ(found[2].line, 6);
}

TEST(TokenLines, MessagesSayTheFormTheFileExpectsAndShowTheFileNamePrintable) {
  TokenLines lines("read a b c d\n", "agent.tokens", TokenLineForm::kScopeToken);
  EXPECT_EQ(lines.Next().error().message, "agent.tokens:1: expected 'SCOPE TOKEN' (2 fields), got 5 words");
  TokenLines escaped("a b c\n", "tokens\x1b[2J", TokenLineForm::kTokenOrScopeToken);
  EXPECT_EQ(escaped.Next().error().message, "tokens\\x1b[2J:1: expected 'TOKEN' or 'SCOPE TOKEN', got 3 words");
}

}  // namespace
}  // namespace wattcut::http
