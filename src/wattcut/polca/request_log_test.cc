#include "wattcut/polca/request_log.h"

#include <gtest/gtest.h>

namespace wattcut::polca {
namespace {

constexpr char kLog[] =
    "TIMESTAMP,ContextTokens,GeneratedTokens,server\n"
    "2024-05-10 00:00:00.009930+00:00,374,44,node-a\n"
    "2024-05-10 00:00:00.500000+00:00,1200,12,node-b\n"
    "2024-05-10 00:00:01.009930+00:00,80,3,node-a\n";

TEST(RequestLogTest, KeepsOneServersRequestsInItsOwnTime) {
  Result<ServerRequestLog> log = ParseRequestLog(kLog, "log.csv", "node-a");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->rows, 3);
  ASSERT_EQ(log->arrivals.size(), 2u);
  EXPECT_NEAR(log->start_unix_s, 1715299200.00993, 1e-6);
  EXPECT_NEAR(log->arrivals[1].time_s, 1.0, 1e-6);
  EXPECT_EQ(log->arrivals[1].context_tokens, 80);
  EXPECT_EQ(log->servers_seen, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_TRUE(LooksLikeRequestLog(kLog));
  EXPECT_FALSE(LooksLikeRequestLog("time,vllm:num_requests_running\n"));
}

TEST(RequestLogTest, BadLogsNameWhatIsWrong) {
  struct Case {
    std::string text, server, expect;
  } cases[] = {
      {kLog, "", "log.csv:3: column 'server': the log holds more than one server"},
      {kLog, "node-c", "no request of server 'node-c' (the log has node-a, node-b)"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00,3,4\n", "", "missing column 'server'"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens,server\n2024-05-10 00:00:00,3,4,\n", "", "log.csv:2: column 'server'"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens,server\n2024-05-10 00:00:01,3,4,a\n2024-05-10 00:00:00,3,4,a\n", "",
       "log.csv:3: column 'TIMESTAMP': timestamps must not decrease"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens,server\n2024-05-10 00:00:00,0,4,a\n", "", "positive token count"},
      {"TIMESTAMP,ContextTokens,GeneratedTokens,server\n2024-05-10 00:00:00,3,4,a\n2024-05-20 00:00:00,3,4,a\n", "",
       "more than 7 days"},
  };
  for (const Case& c : cases) {
    Result<ServerRequestLog> log = ParseRequestLog(c.text, "log.csv", c.server);
    ASSERT_FALSE(log.ok()) << c.text;
    EXPECT_NE(log.error().message.find(c.expect), std::string::npos) << log.error().message;
  }
}

}  // namespace
}  // namespace wattcut::polca
