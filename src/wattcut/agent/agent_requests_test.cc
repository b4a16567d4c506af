#include "wattcut/agent/agent_requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace wattcut::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
void ExpectError(const Result<T>& result, ErrorCode code, const std::string& message_part) {
  ASSERT_FALSE(result.ok()) << "expected an error containing: " << message_part;
  EXPECT_EQ(result.error().code, code) << result.error().message;
  EXPECT_THAT(result.error().message, HasSubstr(message_part));
}

// Every parser of a JSON body refuses what is not a JSON object with kMalformed (a 400).
TEST(AgentRequests, BodiesThatAreNotJsonObjectsAreMalformed) {
  const std::string bodies[] = {"",         "{",    "{\"gpus\":[0]", "[0,1]",        "42",
                                "\"text\"", "null", "{\"a\":1}x",    "{\"a\":\x7f}", "{'gpus':[0]}"};
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body);
    ExpectError(ParseLeaseRequest(body), ErrorCode::kMalformed, "");
    ExpectError(ParseClockRangeRequest(body), ErrorCode::kMalformed, "");
    ExpectError(ParsePowerLimitRequest(body), ErrorCode::kMalformed, "");
    ExpectError(ParseCeilingRequest(body, CeilingScope::kOneGpu), ErrorCode::kMalformed, "");
    ExpectError(ParseCeilingRequest(body, CeilingScope::kAllGpus), ErrorCode::kMalformed, "");
  }
  ExpectError(ParseLeaseRequest(""), ErrorCode::kMalformed, "request body is empty; expected a JSON object");
  ExpectError(ParseLeaseRequest("[0]"), ErrorCode::kMalformed, "expected a JSON object, got array");
  // nlohmann's message quotes the byte it stopped at; a DEL must not reach a terminal.
  auto del = ParseLeaseRequest("{\"gpus\":\x7f}");
  ASSERT_FALSE(del.ok());
  EXPECT_EQ(del.error().message.find('\x7f'), std::string::npos) << del.error().message;
}

TEST(AgentRequests, AKeyGivenTwiceIsRefused) {
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":1200,"min_mhz":900})"), ErrorCode::kMalformed,
              "field 'min_mhz' appears twice");
  // The same key in two different objects is fine (here refused later, as an unknown field).
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"x":{"gpus":1}})"), ErrorCode::kInvalidArgument, "unknown field 'x'");
}

TEST(AgentRequests, Lease) {
  auto lease = ParseLeaseRequest(R"({"gpus":[0,3],"ttl_s":30})");
  ASSERT_TRUE(lease.ok()) << lease.error().message;
  EXPECT_THAT(lease->gpus, ElementsAre(0, 3));
  EXPECT_EQ(lease->ttl_s, 30);

  auto defaults = ParseLeaseRequest(R"({"gpus":[4095]})");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->ttl_s, 10);
  EXPECT_EQ(ParseLeaseRequest(R"({"gpus":[1],"ttl_s":null})")->ttl_s, 10);
  EXPECT_EQ(ParseLeaseRequest(R"({"gpus":[1],"ttl_s":1})")->ttl_s, 1);
  EXPECT_EQ(ParseLeaseRequest(R"({"gpus":[1],"ttl_s":3600})")->ttl_s, 3600);

  const auto kInvalid = ErrorCode::kInvalidArgument;
  ExpectError(ParseLeaseRequest("{}"), kInvalid, "field 'gpus' is required");
  ExpectError(ParseLeaseRequest(R"({"gpus":null})"), kInvalid, "field 'gpus' is required");
  ExpectError(ParseLeaseRequest(R"({"gpus":[]})"), kInvalid, "field 'gpus': expected at least one GPU index");
  ExpectError(ParseLeaseRequest(R"({"gpus":0})"), kInvalid, "field 'gpus': expected a list of GPU indices, got 0");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0,0]})"), kInvalid, "field 'gpus': GPU 0 is listed twice");
  ExpectError(ParseLeaseRequest(R"({"gpus":[4096]})"), kInvalid, "field 'gpus[0]': 4096 is out of range [0, 4095]");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0,-1]})"), kInvalid, "field 'gpus[1]': -1 is out of range [0, 4095]");
  ExpectError(ParseLeaseRequest(R"({"gpus":[1.5]})"), kInvalid,
              "field 'gpus[0]': expected an integer in [0, 4095], got 1.5");
  ExpectError(ParseLeaseRequest(R"({"gpus":["0"]})"), kInvalid, "got \"0\"");
  ExpectError(ParseLeaseRequest(R"({"gpus":[18446744073709551615]})"), kInvalid,
              "18446744073709551615 is out of range");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"ttl_s":0})"), kInvalid, "field 'ttl_s': 0 is out of range [1, 3600]");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"ttl_s":3601})"), kInvalid, "field 'ttl_s': 3601 is out of range");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"ttl_s":"10"})"), kInvalid, "field 'ttl_s': expected an integer");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"ttl_s":10.5})"), kInvalid, "field 'ttl_s': expected an integer");
  ExpectError(ParseLeaseRequest(R"({"gpus":[0],"ttl":10})"), kInvalid,
              "unknown field 'ttl'; expected only gpus, ttl_s");
}

TEST(AgentRequests, ClockRange) {
  auto range = ParseClockRangeRequest(R"({"min_mhz":900,"max_mhz":1410})");
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->min_mhz, 900);
  EXPECT_EQ(range->max_mhz, 1410);
  auto one = ParseClockRangeRequest(R"({"min_mhz":1200})");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->max_mhz, 1200);
  EXPECT_TRUE(ParseClockRangeRequest(R"({"min_mhz":100000})").ok());

  const auto kInvalid = ErrorCode::kInvalidArgument;
  ExpectError(ParseClockRangeRequest("{}"), kInvalid, "field 'min_mhz' is required");
  ExpectError(ParseClockRangeRequest(R"({"max_mhz":1200})"), kInvalid, "field 'min_mhz' is required");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":0})"), kInvalid, "field 'min_mhz': 0 is out of range [1, 100000]");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":-5})"), kInvalid, "field 'min_mhz': -5 is out of range");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":100001})"), kInvalid, "100001 is out of range");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":1200,"max_mhz":900})"), kInvalid,
              "field 'max_mhz': 900 is below min_mhz 1200");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":true})"), kInvalid,
              "field 'min_mhz': expected an integer in [1, 100000], got true");
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":1200,"max_mhz":[1]})"), kInvalid, "got array");
  // A misspelt field must not pass silently.
  ExpectError(ParseClockRangeRequest(R"({"min_mhz":1200,"max_mzh":1300})"), kInvalid,
              "unknown field 'max_mzh'; expected only min_mhz, max_mhz");
  ExpectError(ParseClockRangeRequest("{\"min_mhz\":1,\"\\u001b[2J\":1}"), kInvalid, "unknown field '\\x1b[2J'");
}

TEST(AgentRequests, PowerLimit) {
  auto limit = ParsePowerLimitRequest(R"({"watts":300})");
  ASSERT_TRUE(limit.ok()) << limit.error().message;
  EXPECT_EQ(limit->watts, 300);
  EXPECT_EQ(ParsePowerLimitRequest(R"({"watts":212.5})")->watts, 212.5);
  EXPECT_EQ(ParsePowerLimitRequest(R"({"watts":99999.9})")->watts, 99999.9);

  const auto kInvalid = ErrorCode::kInvalidArgument;
  ExpectError(ParsePowerLimitRequest("{}"), kInvalid, "field 'watts' is required");
  ExpectError(ParsePowerLimitRequest(R"({"watts":0})"), kInvalid, "field 'watts': 0 is out of range");
  ExpectError(ParsePowerLimitRequest(R"({"watts":-300})"), kInvalid, "field 'watts': -300 is out of range");
  ExpectError(ParsePowerLimitRequest(R"({"watts":100000})"), kInvalid, "less than 100000");
  ExpectError(ParsePowerLimitRequest(R"({"watts":1e300})"), kInvalid, "1e+300 is out of range");
  ExpectError(ParsePowerLimitRequest(R"({"watts":"300"})"), kInvalid,
              "field 'watts': expected a number of watts, got \"300\"");
  ExpectError(ParsePowerLimitRequest(R"({"watts":300,"gpu":0})"), kInvalid, "unknown field 'gpu'; expected only watts");
  // A number JSON cannot hold is a syntax error of the body.
  ExpectError(ParsePowerLimitRequest(R"({"watts":1e400})"), ErrorCode::kMalformed, "malformed JSON");
}

TEST(AgentRequests, CeilingOfOneGpu) {
  auto ceiling = ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":"low-priority"})", CeilingScope::kOneGpu);
  ASSERT_TRUE(ceiling.ok()) << ceiling.error().message;
  EXPECT_EQ(ceiling->mhz, 1275);
  EXPECT_EQ(ceiling->lease_s, 30);
  EXPECT_EQ(ceiling->reason, "low-priority");
  EXPECT_FALSE(ceiling->gpus.has_value());
  auto no_reason = ParseCeilingRequest(R"({"mhz":1275,"lease_s":86400})", CeilingScope::kOneGpu);
  ASSERT_TRUE(no_reason.ok());
  EXPECT_EQ(no_reason->reason, "");
  std::string longest(64, 'r');
  EXPECT_TRUE(ParseCeilingRequest(R"({"mhz":1,"lease_s":1,"reason":")" + longest + "\"}", CeilingScope::kOneGpu).ok());

  const auto kInvalid = ErrorCode::kInvalidArgument;
  auto one = CeilingScope::kOneGpu;
  ExpectError(ParseCeilingRequest(R"({"lease_s":30})", one), kInvalid, "field 'mhz' is required");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275})", one), kInvalid, "field 'lease_s' is required");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":0})", one), kInvalid,
              "field 'lease_s': 0 is out of range [1, 86400]");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":86401})", one), kInvalid, "86401 is out of range");
  ExpectError(ParseCeilingRequest(R"({"mhz":0,"lease_s":30})", one), kInvalid, "field 'mhz': 0 is out of range");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":5})", one), kInvalid,
              "field 'reason': expected at most 64 printable ASCII characters, got 5");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":")" + longest + "r\"}", one), kInvalid,
              "field 'reason': expected at most 64 printable ASCII characters, got 65");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":"a\u001bb"})", one), kInvalid,
              "byte 1 is not one (\\x1b)");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":"caf\u00e9"})", one), kInvalid,
              "byte 3 is not one");
  // The per-GPU form names its GPU in the path.
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"gpus":[0]})", one), kInvalid,
              "unknown field 'gpus'; expected only mhz, lease_s, reason");
}

TEST(AgentRequests, CeilingOfAllGpus) {
  auto all = ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"reason":"brake"})", CeilingScope::kAllGpus);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_FALSE(all->gpus.has_value());
  auto some = ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"gpus":[1,0]})", CeilingScope::kAllGpus);
  ASSERT_TRUE(some.ok());
  ASSERT_TRUE(some->gpus.has_value());
  EXPECT_THAT(*some->gpus, ElementsAre(1, 0));
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"gpus":[]})", CeilingScope::kAllGpus),
              ErrorCode::kInvalidArgument, "field 'gpus': expected at least one GPU index");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"gpus":[2,2]})", CeilingScope::kAllGpus),
              ErrorCode::kInvalidArgument, "GPU 2 is listed twice");
  ExpectError(ParseCeilingRequest(R"({"mhz":1275,"lease_s":30,"gpu":[0]})", CeilingScope::kAllGpus),
              ErrorCode::kInvalidArgument, "unknown field 'gpu'; expected only mhz, lease_s, reason, gpus");
}

TEST(AgentRequests, StreamQuery) {
  auto defaults = ParseStreamQuery({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->interval_s, 1);
  EXPECT_FALSE(defaults->count.has_value());

  auto query = ParseStreamQuery({{"interval_s", "0.1"}, {"count", "50"}});
  ASSERT_TRUE(query.ok()) << query.error().message;
  EXPECT_EQ(query->interval_s, 0.1);
  EXPECT_EQ(query->count, 50);
  EXPECT_EQ(ParseStreamQuery({{"interval_s", "0.01"}})->interval_s, 0.01);
  EXPECT_EQ(ParseStreamQuery({{"interval_s", "60"}})->interval_s, 60);
  EXPECT_EQ(ParseStreamQuery({{"interval_s", "1e-2"}})->interval_s, 0.01);
  EXPECT_EQ(ParseStreamQuery({{"count", "1000000"}})->count, 1000000);

  const auto kInvalid = ErrorCode::kInvalidArgument;
  for (const char* bad : {"", "0", "0.009", "61", "-1", "abc", "1s", " 1", "nan", "inf", "1e400"}) {
    ExpectError(ParseStreamQuery({{"interval_s", bad}}), kInvalid,
                "query parameter 'interval_s': expected seconds in [0.01, 60], got '" + std::string(bad) + "'");
  }
  for (const char* bad : {"", "0", "1000001", "-1", "1.5", "+5", "05", "99999999999999999999999"}) {
    ExpectError(ParseStreamQuery({{"count", bad}}), kInvalid,
                "query parameter 'count': expected an integer in [1, 1000000], got '" + std::string(bad) + "'");
  }
  ExpectError(ParseStreamQuery({{"count", "1"}, {"count", "2"}}), kInvalid, "query parameter 'count' is given 2 times");
  ExpectError(ParseStreamQuery({{"interval", "1"}}), kInvalid,
              "unknown query parameter 'interval'; expected only interval_s, count");
  ExpectError(ParseStreamQuery({{"count", "\x1b"}}), kInvalid, "got '\\x1b'");
}

TEST(AgentRequests, GpuIndexSegment) {
  EXPECT_EQ(*ParseGpuIndexSegment("0"), 0);
  EXPECT_EQ(*ParseGpuIndexSegment("7"), 7);
  EXPECT_EQ(*ParseGpuIndexSegment("4095"), 4095);
  for (const char* bad : {"", "4096", "-1", "+1", "01", "1 ", "0x1", "a", "1e3", "99999999999999999999999"}) {
    ExpectError(ParseGpuIndexSegment(bad), ErrorCode::kNotFound,
                "no GPU '" + std::string(bad) + "': a GPU index is an integer in [0, 4095]");
  }
}

TEST(AgentRequests, LeaseIdSegment) {
  EXPECT_EQ(*ParseLeaseIdSegment("1"), 1u);
  EXPECT_EQ(*ParseLeaseIdSegment("9223372036854775808"), uint64_t{1} << 63);
  for (const char* bad : {"", "0", "9223372036854775809", "18446744073709551616", "-1", "01", "abc", "1.0"}) {
    ExpectError(ParseLeaseIdSegment(bad), ErrorCode::kNotFound,
                "no lease '" + std::string(bad) + "': a lease id is an integer in [1, 9223372036854775808]");
  }
}

}  // namespace
}  // namespace wattcut::agent
