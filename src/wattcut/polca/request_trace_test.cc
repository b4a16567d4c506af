#include "wattcut/polca/request_trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "wattcut/base/shared_data_testing.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {
namespace {

TEST(ParseTimestamp, ReadsThe2024FormWithItsUtcOffset) {
  const double utc = *ParseTimestamp("2024-05-10 00:00:00.00993");
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-10 00:00:00.009930+00:00"), utc);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-10 00:00:00.009930-00:00"), utc);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-10 00:00:00.009930Z"), utc);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-10 00:00:00+00:00"), *ParseTimestamp("2024-05-10 00:00:00"));
  // Other offsets are converted to UTC: 02:00 at +02:00 is midnight UTC, 18:30 at -05:30 too.
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-10 02:00:00.009930+02:00"), utc);
  EXPECT_DOUBLE_EQ(*ParseTimestamp("2024-05-09 18:30:00.009930-05:30"), utc);
  EXPECT_EQ(ParseTimestamp("2024-05-10 00:00:00.009930+0000").error().message,
            "expected a UTC offset Z, +HH:MM or -HH:MM after the time in '2024-05-10 00:00:00.009930+0000'");
  EXPECT_EQ(ParseTimestamp("2024-05-10 00:00:00+00:0x").error().message,
            "expected a UTC offset Z, +HH:MM or -HH:MM after the time in '2024-05-10 00:00:00+00:0x'");
  EXPECT_EQ(ParseTimestamp("2024-05-10 00:00:00+24:00").error().message,
            "UTC offset out of range in '2024-05-10 00:00:00+24:00'");
  EXPECT_EQ(ParseTimestamp("2024-05-10 00:00:00Z+01:00").error().message,
            "expected nothing after the UTC offset 'Z' in '2024-05-10 00:00:00Z+01:00'");
  EXPECT_FALSE(ParseTimestamp("2024-05-10 00:00:00.+00:00").ok());
  EXPECT_FALSE(ParseTimestamp("2024-05-10 00:00:00.1234567890+00:00").ok());  // 10 fractional digits
  EXPECT_FALSE(ParseTimestamp("2024-05-10 00:00:00 UTC").ok());
}

TEST(FormatTimestamp, WritesThe2024FormThatParsesBack) {
  EXPECT_EQ(FormatTimestamp(*ParseTimestamp("2024-05-10 00:00:00.00993")), "2024-05-10 00:00:00.009930+00:00");
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01 00:00:00.000000+00:00");
  for (const char* text :
       {"2024-02-29 23:59:59.999999+00:00", "2023-11-16 18:15:46.680590+00:00", "2000-03-01 12:00:00.000001+00:00"}) {
    EXPECT_EQ(FormatTimestamp(*ParseTimestamp(text)), text);
  }
}

TEST(RequestTrace, ParsesThe2024Form) {
  auto trace = RequestTrace::Parse(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2024-05-10 00:00:00.009930+00:00,4808,10\n"
      "2024-05-10 00:00:01.509930+00:00,3180,8\n",
      "t.csv");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_NEAR(trace->requests()[1].arrival_s, 1.5, 1e-6);
  EXPECT_EQ(trace->start_timestamp(), "2024-05-10 00:00:00.009930+00:00");
  EXPECT_EQ(RequestTrace::Parse("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.1+25:00,1,1\n", "t.csv")
                .error()
                .message,
            "t.csv:2: column 'TIMESTAMP': UTC offset out of range in '2024-05-10 00:00:00.1+25:00'");
}

TEST(RequestTrace, ParsesRelativeArrivals) {
  auto trace = RequestTrace::Parse(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
      "2023-11-16 18:15:46.5,374,44\n"
      "2023-11-16 18:15:46.5,10,1\n"
      "2023-11-16 18:15:50.0,396,109\n",
      "t.csv");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->requests().size(), 3u);
  EXPECT_DOUBLE_EQ(trace->requests()[0].arrival_s, 0);
  EXPECT_DOUBLE_EQ(trace->requests()[2].arrival_s, 3.5);
  EXPECT_EQ(trace->requests()[2].context_tokens, 396);
  EXPECT_EQ(trace->requests()[2].generated_tokens, 109);
  EXPECT_DOUBLE_EQ(trace->span_s(), 3.5);
  EXPECT_EQ(trace->start_timestamp(), "2023-11-16 18:15:46.5");
}

TEST(RequestTrace, RejectsBadRowsWithLocation) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,374,44\nyesterday,1,1\n", "t.csv").error().message,
            "t.csv:3: column 'TIMESTAMP': expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got 'yesterday'");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,-5,44\n", "t.csv").error().message,
            "t.csv:2: column 'ContextTokens': expected a positive token count, got -5");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,5,0\n", "t.csv").error().message,
            "t.csv:2: column 'GeneratedTokens': expected a positive token count, got 0");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,5,abc\n", "t.csv").error().message,
            "t.csv:2: column 'GeneratedTokens': expected an integer, got 'abc'");
  EXPECT_EQ(
      RequestTrace::Parse(header + "2023-11-16 18:15:46,5,5\n2023-11-16 18:15:45.9,5,5\n", "t.csv").error().message,
      "t.csv:3: column 'TIMESTAMP': timestamps must not decrease: '2023-11-16 18:15:45.9' is earlier than "
      "the row before");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,5\n", "t.csv").error().message,
            "t.csv:2: expected 3 fields as in the header, got 2");
  EXPECT_EQ(RequestTrace::Parse("time,ContextTokens,GeneratedTokens\n", "t.csv").error().message,
            "t.csv: missing column 'TIMESTAMP' (expected header TIMESTAMP,ContextTokens,GeneratedTokens)");
  EXPECT_EQ(RequestTrace::Parse(header, "t.csv").error().message, "t.csv: no requests after the header");
  // Before, each of these was read: a leap second (the next minute's first), a signed count, and a
  // fourth column passed over.
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:60,5,5\n", "t.csv").error().message,
            "t.csv:2: column 'TIMESTAMP': time of day out of range in '2023-11-16 18:15:60' (hours 00-23, minutes "
            "and seconds 00-59)");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,+5,5\n", "t.csv").error().message,
            "t.csv:2: column 'ContextTokens': expected a token count (digits), got '+5'");
  EXPECT_EQ(RequestTrace::Parse("TIMESTAMP,ContextTokens,GeneratedTokens,server\n2023-11-16 18:15:46,5,5,a\n", "t.csv")
                .error()
                .message,
            "t.csv:1: column 'server' is not a request trace's (expected header TIMESTAMP,ContextTokens,"
            "GeneratedTokens)");
}

TEST(RequestTrace, BadRowsAreLocatedAndNeverEchoControlBytes) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_EQ(
      RequestTrace::Parse(header + "2023-11-16 18:15:46,374,44\n\x1b[2J\x1b]0;x\x07,1,1\n", "t.csv").error().message,
      "t.csv:3: column 'TIMESTAMP': expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got "
      "'\\x1b[2J\\x1b]0;x\\x07'");
  EXPECT_EQ(RequestTrace::Parse(
                header + "2023-11-16 18:15:46,5,5\n2023-11-16 18:15:45" + std::string("\0", 1) + ",5,5\n", "t.csv")
                .error()
                .message,
            "t.csv:3: column 'TIMESTAMP': expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got "
            "'2023-11-16 18:15:45\\x00'");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,5,5\n2023-11-16 18:15:46,5,1\x1b[31m\n", "t.csv")
                .error()
                .message,
            "t.csv:3: column 'GeneratedTokens': expected an integer, got '1\\x1b[31m'");
  EXPECT_EQ(
      RequestTrace::Parse(header + "2023-11-16 18:15:46," + std::string(1000, '7') + ",5\n", "t.csv").error().message,
      "t.csv:2: column 'ContextTokens': expected an integer, got '" + std::string(80, '7') + "...'");
}

TEST(RequestTrace, EnforcesTheTraceBounds) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,20000000,5\n", "t.csv").error().message,
            "t.csv:2: column 'ContextTokens': expected at most 10000000 tokens per request, got 20000000");
  EXPECT_EQ(RequestTrace::Parse(header + "2023-11-16 18:15:46,5,5\n2023-12-17 18:15:47,5,5\n", "t.csv").error().message,
            "t.csv:3: column 'TIMESTAMP': '2023-12-17 18:15:47' is more than 31 days after the first request "
            "('2023-11-16 18:15:46'); a trace is replayed as the shape of every block and should span about an hour");
  EXPECT_TRUE(RequestTrace::Parse(header + "2023-11-16 18:15:46,5,5\n2023-12-17 18:15:46,5,5\n", "t.csv").ok());
  EXPECT_FALSE(RequestTrace::FromRequests({{0, 1, 1}, {kMaxTraceSpanS + 1, 1, 1}}, "mem").ok());
  // A UTF-8 byte order mark before the header (as spreadsheet programs write) is not a column.
  EXPECT_TRUE(RequestTrace::Parse("\xEF\xBB\xBF" + header + "2023-11-16 18:15:46,5,5\n", "t.csv").ok());
}

// A file is read a chunk at a time, holding only the requests (before: a table of every row, 260
// bytes a row, 2.6 GB for a 10-million-row week); across chunk boundaries it reads as the text does.
TEST(RequestTrace, AFileReadInChunksIsTheTextParsed) {
  std::string text;
  // 60,000 requests 0.01 s apart, about 1.9 MB: a chunk (1 MiB) and a part.
  text = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (int i = 0; i < 60000; ++i) {
    char row[80];
    const int centis = i;  // 0.01 s apart
    std::snprintf(row, sizeof(row), "2023-11-16 %02d:%02d:%02d.%02d,%d,%d\n", centis / 360000, (centis / 6000) % 60,
                  (centis / 100) % 60, centis % 100, 1 + i % 3000, 1 + i % 400);
    text += row;
  }
  const std::string path = ::testing::TempDir() + "/request_trace_chunks.csv";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  ASSERT_GT(text.size(), size_t{1} << 20);
  Result<RequestTrace> read = RequestTrace::Read(path);
  Result<RequestTrace> parsed = RequestTrace::Parse(text, path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(read->requests().size(), 60000u);
  ASSERT_EQ(parsed->requests().size(), 60000u);
  for (size_t i = 0; i < 60000; i += 997) {
    EXPECT_DOUBLE_EQ(read->requests()[i].arrival_s, parsed->requests()[i].arrival_s) << i;
    EXPECT_EQ(read->requests()[i].context_tokens, parsed->requests()[i].context_tokens) << i;
  }
  EXPECT_NEAR(read->requests().back().arrival_s, 599.99, 1e-6);
  EXPECT_EQ(read->start_timestamp(), parsed->start_timestamp());
  std::remove(path.c_str());
}

TEST(RequestTrace, FromRequestsChecksOrderAndTokens) {
  EXPECT_TRUE(RequestTrace::FromRequests({{0, 1, 1}, {1, 2, 2}}, "mem").ok());
  EXPECT_FALSE(RequestTrace::FromRequests({{1, 1, 1}, {0, 2, 2}}, "mem").ok());
  EXPECT_FALSE(RequestTrace::FromRequests({{0, 0, 1}}, "mem").ok());
  EXPECT_FALSE(RequestTrace::FromRequests({}, "mem").ok());
}

TEST(RequestTrace, ReadsTheAzureConversationTrace) {
  WATTCUT_REQUIRE_SHARED_FILE(path, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  auto trace = RequestTrace::Read(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->requests().size(), 19366u);
  EXPECT_NEAR(trace->span_s(), 3501.72, 0.01);
  EXPECT_EQ(trace->requests()[0].context_tokens, 374);
  EXPECT_EQ(trace->requests()[0].generated_tokens, 44);
}

}  // namespace
}  // namespace wattcut::polca
