#include "wattcut/polca/request_trace_reader.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "wattcut/base/file_text_testing.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {
namespace {

const char kHeader[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

class RequestTraceReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "request_trace_reader_test_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // The first error reading the whole file, or "".
  static std::string ReadError(const std::string& path) {
    Result<RequestTraceReader> reader = RequestTraceReader::Open(path);
    if (!reader.ok()) return reader.error().message;
    TraceRequest r;
    while (true) {
      Result<bool> more = reader->Next(r);
      if (!more.ok()) return more.error().message;
      if (!*more) return "";
    }
  }

  std::string dir_;
};

TEST_F(RequestTraceReaderTest, StreamsTheRequestsRequestTraceReads) {
  std::string text = kHeader;
  const double start = *ParseTimestamp("2024-05-10 00:00:00.009930");
  for (int i = 0; i < 5000; ++i) {
    text += FormatTimestamp(start + i * 0.37) + "," + std::to_string(1 + i % 4000) + "," + std::to_string(1 + i % 300) +
            "\n";
  }
  const std::string path = Write("week.csv", text);
  auto whole = RequestTrace::Parse(text, path);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  auto reader = RequestTraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader->name(), path);
  TraceRequest r;
  for (const TraceRequest& want : whole->requests()) {
    ASSERT_TRUE(*reader->Next(r));
    EXPECT_EQ(r.arrival_s, want.arrival_s);
    EXPECT_EQ(r.context_tokens, want.context_tokens);
    EXPECT_EQ(r.generated_tokens, want.generated_tokens);
  }
  EXPECT_FALSE(*reader->Next(r));
  EXPECT_EQ(reader->requests_read(), 5000);
  EXPECT_EQ(reader->start_timestamp(), "2024-05-10 00:00:00.009930+00:00");
  EXPECT_DOUBLE_EQ(reader->start_utc_s(), start);
}

TEST_F(RequestTraceReaderTest, BadRowsAreLocatedAsRequestTraceLocatesThem) {
  const std::string first = "2024-05-10 00:00:01.000000+00:00,5,5\n";
  const std::string unsorted = Write("unsorted.csv", kHeader + first + "2024-05-10 00:00:00.500000+00:00,5,5\n");
  EXPECT_EQ(ReadError(unsorted), unsorted +
                                     ":3: column 'TIMESTAMP': timestamps must not decrease: '2024-05-10 "
                                     "00:00:00.500000+00:00' is earlier than the row before");
  // Sorted once converted to UTC: 02:00:02 at +02:00 is after 00:00:01 UTC.
  EXPECT_EQ(ReadError(Write("offsets.csv", kHeader + first + "2024-05-10 02:00:02.000000+02:00,5,5\n")), "");
  const std::string offset = Write("offset.csv", kHeader + first + "2024-05-10 00:00:02.000000+0000,5,5\n");
  EXPECT_EQ(ReadError(offset), offset +
                                   ":3: column 'TIMESTAMP': expected a UTC offset Z, +HH:MM or -HH:MM after the time "
                                   "in '2024-05-10 00:00:02.000000+0000'");
  const std::string truncated = Write("truncated.csv", kHeader + first + "2024-05-10 00:00:02.0000");
  EXPECT_EQ(ReadError(truncated), truncated + ":3: expected 3 fields as in the header, got 1");
  const std::string short_row = Write("short.csv", kHeader + first + "2024-05-10 00:00:02.000000+00:00,5\n");
  EXPECT_EQ(ReadError(short_row), short_row + ":3: expected 3 fields as in the header, got 2");
  const std::string tokens = Write("tokens.csv", kHeader + first + "2024-05-10 00:00:02.000000+00:00,0,5\n");
  EXPECT_EQ(ReadError(tokens), tokens + ":3: column 'ContextTokens': expected a positive token count, got 0");
  const std::string columns = Write("columns.csv", "time,ContextTokens,GeneratedTokens\n");
  EXPECT_EQ(ReadError(columns),
            columns + ": missing column 'TIMESTAMP' (expected header TIMESTAMP,ContextTokens,GeneratedTokens)");
  const std::string empty = Write("empty.csv", kHeader);
  EXPECT_EQ(ReadError(empty), empty + ": no requests after the header");
  const std::string long_span = Write("long.csv", kHeader + first + "2024-08-10 00:00:02.000000+00:00,5,5\n");
  EXPECT_EQ(ReadError(long_span), long_span +
                                      ":3: column 'TIMESTAMP': '2024-08-10 00:00:02.000000+00:00' is more than 90 "
                                      "days after the first request ('2024-05-10 00:00:01.000000+00:00'); a run "
                                      "follows the trace's timeline and lasts at most 90 days");
  // The timeline's pass reports the same.
  EXPECT_EQ(TraceTimeline::Scan(unsorted).error().message, ReadError(unsorted));
}

TEST_F(RequestTraceReaderTest, TheTimelineCountsRequestsPerHourOfTheTrace) {
  std::string text = kHeader;
  const double start = *ParseTimestamp("2024-05-10 00:00:00.009930");
  // Hour h holds 10 + h requests, spread over it; one more request ends the trace at 5 h 30 min.
  for (int h = 0; h < 5; ++h) {
    for (int i = 0; i < 10 + h; ++i) text += FormatTimestamp(start + h * 3600 + i * 3600.0 / (10 + h)) + ",10,2\n";
  }
  text += FormatTimestamp(start + 5.5 * 3600) + ",10,2\n";
  auto timeline = TraceTimeline::Scan(Write("hours.csv", text));
  ASSERT_TRUE(timeline.ok()) << timeline.error().message;
  EXPECT_EQ(timeline->hourly_requests, (std::vector<int64_t>{10, 11, 12, 13, 14, 1}));
  EXPECT_EQ(timeline->requests, 61);
  EXPECT_NEAR(timeline->span_s, 5.5 * 3600, 1e-5);
  EXPECT_EQ(timeline->full_hours(), 5u);
  EXPECT_EQ(timeline->busiest_hour(), 4u);
  EXPECT_EQ(timeline->busiest_hour_requests(), 14);
  EXPECT_EQ(timeline->duration_s(), 5.5 * 3600 + 1);
  EXPECT_EQ(timeline->start_timestamp, "2024-05-10 00:00:00.009930+00:00");
  EXPECT_EQ(timeline->RequestsBefore(3600), 10);
  EXPECT_EQ(timeline->RequestsBefore(3601), 21);

  const std::string short_trace =
      Write("short.csv", std::string(kHeader) + "2024-05-10 00:00:00+00:00,1,1\n" + "2024-05-10 00:59:00+00:00,1,1\n");
  EXPECT_EQ(TraceTimeline::Scan(short_trace).error().message,
            short_trace +
                ": the trace spans 3540.000000 s, less than the hour --time-of-day trace needs (its busiest hour "
                "sets the row's rate)");
}

}  // namespace
}  // namespace wattcut::polca
