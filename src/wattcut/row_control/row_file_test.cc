#include "wattcut/row_control/row_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "wattcut/polca/row_limits.h"

namespace wattcut::row_control {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(std::string_view text) {
  auto parsed = ParseRowFile(text, "row.txt");
  if (parsed.ok()) return "(parsed)";
  return parsed.error().message;
}

TEST(RowFile, ATrainingServerNamesItsJobAndFallsBackAsLowPriority) {
  auto servers = ParseRowFile(
      "inf1 http://10.1.0.11:7788 high\n"
      "t1 http://10.1.0.21:7788 training 2026-12-01-10-00-00+dp2+pp4+tp1+perseus+7   # GPT\n"
      "t2 http://10.1.0.22:7788 training 2026-12-01-10-00-00+dp2+pp4+tp1+perseus+7\n",
      "row.txt");
  ASSERT_TRUE(servers.ok()) << servers.error().message;
  ASSERT_EQ(servers->size(), 3u);
  EXPECT_EQ((*servers)[0].training_job_id, "");
  EXPECT_EQ((*servers)[1].training_job_id, "2026-12-01-10-00-00+dp2+pp4+tp1+perseus+7");
  EXPECT_EQ((*servers)[1].priority, polca::Priority::kLow);
  EXPECT_EQ((*servers)[2].training_job_id, (*servers)[1].training_job_id);

  EXPECT_THAT(ErrorOf("t http://h:1 training\n"), HasSubstr("row.txt:1: missing JOB_ID after 'training'"));
  EXPECT_THAT(ErrorOf("t http://h:1 training job-1 more\n"), HasSubstr("row.txt:1: an extra field 'more'"));
  EXPECT_THAT(ErrorOf("t http://h:1 high job-1\n"), HasSubstr("row.txt:1: an extra field 'job-1'"));
  EXPECT_THAT(ErrorOf("t http://h:1 training job/1\n"),
              HasSubstr("row.txt:1: server 't': job id 'job/1' holds '/'; expected the planning server's job id"));
  EXPECT_THAT(ErrorOf("t http://h:1 training " + std::string(257, 'j') + "\n"),
              HasSubstr("row.txt:1: server 't': a job id of 257 characters; expected at most 256"));
}

TEST(RowFile, ParsesServersCommentsAndBlankLines) {
  auto servers = ParseRowFile(
      "# row 12\n"
      "\n"
      "gpu-a01  http://10.1.0.11:7788  high\n"
      "   \t\n"
      "gpu-a02\thttps://node2.example:443/ low   # batch inference\r\n"
      "  # indented comment\n"
      "v6:node http://[fd00::12]:7788 low",  // no final newline
      "row.txt");
  ASSERT_TRUE(servers.ok()) << servers.error().message;
  ASSERT_EQ(servers->size(), 3u);
  EXPECT_EQ((*servers)[0].name, "gpu-a01");
  EXPECT_EQ((*servers)[0].agent_url, "http://10.1.0.11:7788");
  EXPECT_EQ((*servers)[0].priority, polca::Priority::kHigh);
  EXPECT_EQ((*servers)[0].line, 3);
  EXPECT_EQ((*servers)[1].name, "gpu-a02");
  EXPECT_EQ((*servers)[1].agent_url, "https://node2.example:443");
  EXPECT_EQ((*servers)[1].priority, polca::Priority::kLow);
  EXPECT_EQ((*servers)[1].line, 5);
  EXPECT_EQ((*servers)[2].name, "v6:node");
  EXPECT_EQ((*servers)[2].agent_url, "http://[fd00::12]:7788");
  EXPECT_EQ((*servers)[2].line, 7);
}

TEST(RowFile, MissingAndExtraFieldsNameTheLine) {
  EXPECT_THAT(ErrorOf("a http://h:1 high\nb\n"), HasSubstr("row.txt:2: missing AGENT_URL and PRIORITY"));
  EXPECT_THAT(ErrorOf("\nb http://h:1\n"),
              HasSubstr("row.txt:2: missing PRIORITY; expected 'NAME AGENT_URL PRIORITY'"));
  EXPECT_THAT(ErrorOf("b http://h:1 low extra\n"), HasSubstr("row.txt:1: an extra field 'extra'"));
}

TEST(RowFile, UnknownPriorityIsRefused) {
  EXPECT_THAT(
      ErrorOf("a http://h:1 high\nb http://h:2 medium\n"),
      HasSubstr("row.txt:2: server 'b': unknown priority 'medium'; expected 'high', 'low' or 'training JOB_ID'"));
  EXPECT_THAT(ErrorOf("b http://h:2 HIGH\n"), HasSubstr("unknown priority 'HIGH'"));
}

TEST(RowFile, AgentUrlMustBeHttpHostPort) {
  EXPECT_THAT(ErrorOf("a ftp://h:1 high\n"), HasSubstr("row.txt:1: server 'a': agent URL 'ftp://h:1': expected "
                                                       "http://HOST:PORT or https://HOST:PORT"));
  EXPECT_THAT(ErrorOf("a http://h high\n"), HasSubstr("(no port)"));
  EXPECT_THAT(ErrorOf("a http://:7788 high\n"), HasSubstr("(no host)"));
  EXPECT_THAT(ErrorOf("a http://h:0 high\n"), HasSubstr("(a port of 1-65535)"));
  EXPECT_THAT(ErrorOf("a http://h:65536 high\n"), HasSubstr("(a port of 1-65535)"));
  EXPECT_THAT(ErrorOf("a http://h:77x8 high\n"), HasSubstr("(a port of 1-65535)"));
  EXPECT_THAT(ErrorOf("a http://h:7788/v1 high\n"), HasSubstr("(no path"));
  EXPECT_THAT(ErrorOf("a http://u@h:7788 high\n"), HasSubstr("the host holds '@'"));
  EXPECT_THAT(ErrorOf("a http://[fd00::1:7788 high\n"), HasSubstr("(no ']')"));
  EXPECT_THAT(ErrorOf("a http://[fd00::1] high\n"), HasSubstr("(no port)"));
  EXPECT_THAT(ErrorOf("a 10.0.0.1:7788 high\n"), HasSubstr("the scheme is http or https"));
}

TEST(RowFile, NamesAndAgentsAreUsedOnce) {
  EXPECT_THAT(ErrorOf("a http://h:1 high\nb http://h:2 low\na http://h:3 low\n"),
              HasSubstr("row.txt:3: server name 'a' is used twice (first on line 1)"));
  EXPECT_THAT(ErrorOf("a http://h:1 high\nb http://h:1/ low\n"),
              HasSubstr("row.txt:2: server 'b': agent URL http://h:1 is used twice (first on line 1)"));
}

TEST(RowFile, BadNamesAndBytesAreRefused) {
  EXPECT_THAT(ErrorOf("a/b http://h:1 high\n"), HasSubstr("row.txt:1: server name 'a/b' holds '/'"));
  EXPECT_THAT(ErrorOf(std::string(129, 'n') + " http://h:1 high\n"), HasSubstr("server name of 129 characters"));
  EXPECT_THAT(ErrorOf("a http://h:1 high\x1b[2J\n"), HasSubstr("row.txt:1: a byte that is not printable ASCII"));
}

TEST(RowFile, AnEmptyRowIsRefused) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("row.txt: the row has no server"));
  EXPECT_THAT(ErrorOf("# only comments\n\n  # and blanks\n"), HasSubstr("row.txt: the row has no server"));
}

TEST(RowFile, ReadsAFileAndNamesAnUnreadableOne) {
  std::string folder = (std::filesystem::temp_directory_path() / "wcrow-XXXXXX").string();
  ASSERT_NE(::mkdtemp(folder.data()), nullptr);
  const std::string path = folder + "/row.txt";
  std::ofstream(path) << "n1 http://127.0.0.1:7788 low\n";
  auto servers = ReadRowFile(path);
  ASSERT_TRUE(servers.ok()) << servers.error().message;
  ASSERT_EQ(servers->size(), 1u);
  EXPECT_EQ((*servers)[0].priority, polca::Priority::kLow);
  std::ofstream(path) << "n1 http://127.0.0.1:7788 lo\n";
  auto bad = ReadRowFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr(path + ":1: server 'n1': unknown priority 'lo'"));
  auto missing = ReadRowFile(folder + "/none.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("cannot read row file " + folder + "/none.txt"));
  auto directory = ReadRowFile(folder);
  ASSERT_FALSE(directory.ok());
  EXPECT_THAT(directory.error().message, HasSubstr(folder));
  std::filesystem::remove_all(folder);
}

TEST(RowFile, MoreServersThanARowHoldsAreRefused) {
  std::string text;
  for (int i = 0; i <= polca::kMaxServersPerRow; ++i) {
    text += "s" + std::to_string(i) + " http://10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) +
            ":7788 high\n";
  }
  auto parsed = ParseRowFile(text, "row.txt");
  ASSERT_FALSE(parsed.ok());
  const std::string expected = "row.txt:" + std::to_string(polca::kMaxServersPerRow + 1) + ": more than " +
                               std::to_string(polca::kMaxServersPerRow) + " servers: a row's bound";
  EXPECT_EQ(parsed.error().message.rfind(expected, 0), 0u) << parsed.error().message;
}

}  // namespace
}  // namespace wattcut::row_control
