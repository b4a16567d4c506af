#include "wattcut/http/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace wattcut::http
