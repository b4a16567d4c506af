#include "wattcut/polca/power_trace.h"

#include <gtest/gtest.h>

namespace wattcut::polca {
namespace {

std::string ErrorOf(const std::string& text) {
  Result<PowerTrace> t = PowerTrace::Parse(text, "p.csv");
  return t.ok() ? "(parsed)" : t.error().message;
}

TEST(PowerTrace, ReadsServersWithPrioritiesAndIsoTimes) {
  auto t = PowerTrace::Parse(
      "time,server,power_w,priority\n"
      "2024-05-01T12:00:01Z,b,3000,low\n"
      "2024-05-01T12:00:00Z,a,4210.5,high\n"
      "2024-05-01T12:00:02Z,a,4388,high\n"
      "2024-05-01T12:00:03Z,b,3100,low\n",
      "p.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->servers().size(), 2u);
  EXPECT_TRUE(t->priorities_given());
  EXPECT_EQ(t->servers()[0].name, "b");
  EXPECT_EQ(t->servers()[0].priority, Priority::kLow);
  EXPECT_EQ(t->servers()[1].priority, Priority::kHigh);
  // Times are relative to the earliest reading (a's, on the second row).
  EXPECT_DOUBLE_EQ(t->servers()[1].samples[0].time_s, 0);
  EXPECT_DOUBLE_EQ(t->servers()[1].samples[0].power_w, 4210.5);
  EXPECT_DOUBLE_EQ(t->servers()[0].samples[0].time_s, 1);
  EXPECT_DOUBLE_EQ(t->servers()[0].samples[1].time_s, 3);
  EXPECT_DOUBLE_EQ(t->span_s(), 3);
  EXPECT_DOUBLE_EQ(t->sample_interval_s(), 2);
  EXPECT_EQ(t->start_time(), "2024-05-01T12:00:00Z");
}

TEST(PowerTrace, ReadsSecondsWithoutPriorities) {
  auto t = PowerTrace::Parse("time,server,power_w\n1714564800.5,a,100\n1714564801.5,a,0\n", "p.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_FALSE(t->priorities_given());
  EXPECT_FALSE(t->servers()[0].priority_given);
  EXPECT_DOUBLE_EQ(t->servers()[0].samples[1].time_s, 1);
  EXPECT_DOUBLE_EQ(t->sample_interval_s(), 1);
}

TEST(PowerTrace, BadPowerNamesLineColumnAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,100\n1,a,nan\n"),
            "p.csv:3: column 'power_w': expected the server's power in watts (a finite number >= 0), got 'nan'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,inf\n"),
            "p.csv:2: column 'power_w': expected the server's power in watts (a finite number >= 0), got 'inf'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,-5\n"),
            "p.csv:2: column 'power_w': expected the server's power in watts, >= 0 and at most 1000000, got '-5'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,2e6\n"),
            "p.csv:2: column 'power_w': expected the server's power in watts, >= 0 and at most 1000000, got '2e6'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,\n"),
            "p.csv:2: column 'power_w': expected the server's power in watts (a finite number >= 0), got ''");
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,,5\n"),
            "p.csv:2: column 'server': expected a server name, got an empty field");
}

TEST(PowerTrace, BadPrioritiesAreRefused) {
  EXPECT_EQ(ErrorOf("time,server,power_w,priority\n0,a,100,medium\n"),
            "p.csv:2: column 'priority': expected high or low, got 'medium'");
  EXPECT_EQ(ErrorOf("time,server,power_w,priority\n0,a,100,\n"),
            "p.csv:2: column 'priority': expected high or low, got ''");
  EXPECT_EQ(ErrorOf("time,server,power_w,priority\n0,a,100,low\n0,b,100,high\n1,a,100,high\n"),
            "p.csv:4: column 'priority': server 'a' changes priority to high (it was low on line 2); a server keeps "
            "one priority");
}

TEST(PowerTrace, UnsortedTimesNameTheServer) {
  EXPECT_EQ(ErrorOf("time,server,power_w\n5,a,100\n1,b,100\n4,a,100\n"),
            "p.csv:4: column 'time': the readings of server 'a' must be in increasing time: '4' is earlier than its "
            "reading on line 2");
  EXPECT_EQ(ErrorOf("time,server,power_w\n5,a,100\n5,a,100\n"),
            "p.csv:3: column 'time': the readings of server 'a' must be in increasing time: '5' is the same time as "
            "its reading on line 2");
  // Another server's earlier reading is fine: exports group rows per series.
  EXPECT_EQ(ErrorOf("time,server,power_w\n5,a,100\n1,b,100\n"), "(parsed)");
}

TEST(PowerTrace, BadTimesAreRefused) {
  EXPECT_EQ(ErrorOf("time,server,power_w\nsoon,a,100\n"),
            "p.csv:2: column 'time': expected seconds (a number) or an ISO 8601 UTC time, got 'soon'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n-1,a,100\n"), "p.csv:2: column 'time': expected seconds >= 0, got '-1'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n2024-05-01T12:00:00Z,a,100\n5,a,100\n"),
            "p.csv:3: column 'time': expected an ISO 8601 time like the first row's, got '5'");
  EXPECT_EQ(ErrorOf("time,server,power_w\n5,a,100\n2024-05-01T12:00:00Z,a,100\n"),
            "p.csv:3: column 'time': expected seconds like the first row's, got '2024-05-01T12:00:00Z'");
  // ISO 8601 may leave out the seconds (issue 32), not the minutes.
  EXPECT_NE(ErrorOf("time,server,power_w\n2024-05-01T12:00:00Z,a,100\n2024-05-01T12,a,100\n")
                .find("p.csv:3: column 'time': expected an ISO 8601 UTC time"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("time,server,power_w\n0,a,100\n8000000,a,100\n"),
            "p.csv:3: column 'time': the readings span more than 90 days (a replay's longest run)");
}

TEST(PowerTrace, HeaderAndEmptyFile) {
  EXPECT_EQ(ErrorOf(""), "p.csv: file is empty (expected a header line)");
  EXPECT_EQ(ErrorOf("time,server,power_w\n"), "p.csv: no readings after the header");
  EXPECT_EQ(ErrorOf("0,a,100\n1,a,100\n"),
            "p.csv:1: missing column 'time' (expected header time,server,power_w[,priority])");
  EXPECT_EQ(ErrorOf("time,server,watts\n0,a,100\n"),
            "p.csv:1: missing column 'power_w' (expected header time,server,power_w[,priority])");
  EXPECT_EQ(ErrorOf("time,server,power_w,priorty\n0,a,100,low\n"),
            "p.csv:1: unknown column 'priorty' (expected header time,server,power_w[,priority])");
  EXPECT_EQ(ErrorOf("time,server,power_w,time\n0,a,100,0\n"),
            "p.csv:1: a column is named twice (expected header time,server,power_w[,priority])");
}

// Files of another format say what they look like; a control byte in a server name (a NUL made
// "a\0b" a second server printed as "a") is refused.
TEST(PowerTrace, OtherFormatsGetAHintAndServerNamesHaveNoControlBytes) {
  EXPECT_EQ(ErrorOf("timestamp, index, power.draw [W]\n2024/05/01 12:00:00.000, 0, 250.1 W\n"),
            "p.csv:1: missing column 'time' (expected header time,server,power_w[,priority]): this looks like "
            "nvidia-smi --query-gpu output (one GPU a row); polca replay takes one row per server reading: time, the "
            "server's name, its whole power in watts");
  EXPECT_NE(ErrorOf(std::string("\x1f\x8b\x08\x00rest\n1,2\n")).find("this is a gzip file; decompress it first"),
            std::string::npos);
  EXPECT_EQ(ErrorOf(std::string("time,server,power_w\n0,a,100\n0,a\0b,100\n", 38)),
            "p.csv:3: column 'server': expected a server name without control bytes, got 'a\\x00b'");
  // A name longer than any host's is refused where it is read (a 50 MB one took minutes).
  EXPECT_EQ(ErrorOf("time,server,power_w\n0," + std::string(2000, 'n') + ",100\n"),
            "p.csv:2: column 'server': a server name of 2000 bytes, more than the 1024 a name may have here");
}

}  // namespace
}  // namespace wattcut::polca
