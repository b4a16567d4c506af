#include "wattcut/telemetry/agent_readings_stream.h"

#include <gtest/gtest.h>

#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

std::string StreamErrorOf(const std::string& text) {
  Result<PowerTelemetry> t = ParseAgentReadingsStream(text, "s.ndjson", "n");
  return t.ok() ? "(parsed)" : t.error().message;
}

TEST(AgentReadingsStream, ReadsWhatTheAgentWrites) {
  Result<PowerTelemetry> t = ReadAgentReadingsStream(kTestdata + "/agent/node-c.ndjson", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "agent");
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_EQ(t->gpus[0].server, "node-c");
  EXPECT_EQ(t->gpus[0].samples.size(), 3u);
  EXPECT_EQ(t->gpus[1].samples.size(), 2u);  // its power was null once (NVML_ERROR_GPU_IS_LOST)
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].sm_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[0].time_s, 1714564800.25);
  // The server power: the two redfish readings, not the model one.
  ASSERT_EQ(t->servers.size(), 1u);
  ASSERT_EQ(t->servers[0].samples.size(), 2u);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].power_w, 2421);
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("1 GPU readings had no power"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 server powers were the agent's model estimate"), std::string::npos) << notes;
  EXPECT_NE(notes.find("the last line has no line end"), std::string::npos) << notes;
}

TEST(AgentReadingsStream, NullServerAndModelOnly) {
  Result<PowerTelemetry> t = ParseAgentReadingsStream(
      R"({"gpus":[{"index":0,"power_w":100.5,"sm_clock_mhz":null,"errors":{}}],"server":null,"time_s":1.5})"
      "\n",
      "s.ndjson", "n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->servers.empty());
  EXPECT_TRUE(std::isnan(t->gpus[0].samples[0].sm_clock_mhz));
}

TEST(AgentReadingsStream, ALineNestedBeyondTheBoundIsRefusedNotACrash) {
  // Before: a power_w of 100,000 nested '[' ended the reader in SIGSEGV (the value was copied, and
  // quoted with nlohmann's recursive dump).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string error = StreamErrorOf(R"({"gpus":[{"index":0,"power_w":)" + deep +
                                          R"(}],"time_s":1})"
                                          "\n");
  EXPECT_EQ(error.rfind("s.ndjson:1: arrays and objects nested deeper than 128 levels (at gpus[0].power_w", 0), 0u)
      << error.substr(0, 300);
  EXPECT_LT(error.size(), 300u);
}

TEST(AgentReadingsStream, BadLinesNameFileLineAndField) {
  const std::string good = R"({"gpus":[{"index":0,"power_w":100}],"server":null,"time_s":1})"
                           "\n";
  EXPECT_NE(StreamErrorOf(good + "{\"gpus\":[\n" + good).find("s.ndjson:2: not JSON"), std::string::npos);
  EXPECT_NE(StreamErrorOf(good + R"({"gpus":[{"index":0,"power_w":-1}],"time_s":2})"
                                 "\n")
                .find("s.ndjson:2: gpus[0].power_w: expected watts >= 0"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(good + good)
                .find("s.ndjson:2: time_s: readings must be in increasing time: 1 is the same as line 1's"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[],"time_s":1,"time_s":2})"
                          "\n")
                .find("key 'time_s' appears twice"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[{"index":"0","power_w":1}],"time_s":1})"
                          "\n")
                .find("gpus[0].index: expected a GPU index"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[],"time_s":"now"})"
                          "\n")
                .find("time_s: expected Unix seconds"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[],"server":{"source":"guess","power_w":1},"time_s":1})"
                          "\n")
                .find("server.source: expected \"redfish\" or \"model\""),
            std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[{"index":0,"power_w":1},{"index":0,"power_w":2}],"time_s":1})"
                          "\n")
                .find("appears twice in one reading"),
            std::string::npos);
  EXPECT_NE(StreamErrorOf("").find("s.ndjson: no readings"), std::string::npos);
  EXPECT_NE(StreamErrorOf("{\"gpus\":[").find("only a line cut short"), std::string::npos);
  EXPECT_NE(StreamErrorOf(std::string("\0\x01\x02\n", 4)).find("s.ndjson:1: not JSON"), std::string::npos);
  EXPECT_NE(StreamErrorOf(R"({"gpus":[{"index":0,"power_w":null}],"time_s":1})"
                          "\n")
                .find("every GPU's power_w is null"),
            std::string::npos);
}

}  // namespace
}  // namespace wattcut::telemetry
