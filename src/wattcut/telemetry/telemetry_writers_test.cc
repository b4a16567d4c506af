// The writers print what the readers read back: nvidia-smi's CSV (nvidia_smi_csv_writer.h against
// nvidia_smi_csv.h), the vLLM metrics CSV (vllm_metrics_csv_writer.h against serving_load_reader.h) and
// the agent's readings stream (agent_readings_stream_writer.h against agent_readings_stream.h).
#include <gtest/gtest.h>

#include "wattcut/telemetry/agent_readings_stream.h"
#include "wattcut/telemetry/agent_readings_stream_writer.h"
#include "wattcut/telemetry/nvidia_smi_csv.h"
#include "wattcut/telemetry/nvidia_smi_csv_writer.h"
#include "wattcut/telemetry/serving_load_reader.h"
#include "wattcut/telemetry/vllm_metrics_csv_writer.h"

namespace wattcut::telemetry {
namespace {

TEST(NvidiaSmiCsvWriterTest, PrintsAsNvidiaSmiDoesAndReadsBack) {
  PowerTelemetry avg;
  avg.gpus = {{"n", "0", {{1715299200.25, 85.5, 1410}, {1715299200.5, 300.25, 1200}}},
              {"n", "1", {{1715299200.25, 86.5, 1410}, {1715299200.5, 301.25, 1200}}}};
  PowerTelemetry inst = avg;
  inst.gpus[1].samples[1].power_w = 390.5;
  NvidiaSmiCsvOptions w;
  w.utc_offset_minutes = -300;
  const std::string text = NvidiaSmiCsvText(avg, inst, w);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "timestamp, index, uuid, power.draw [W], power.draw.average [W], power.draw.instant [W], clocks.sm [MHz]");
  EXPECT_NE(text.find("\n2024/05/09 19:00:00.500, 1, GPU-"), std::string::npos) << text;
  EXPECT_NE(text.find(", 301.25 W, 301.25 W, 390.50 W, 1200 MHz\n"), std::string::npos) << text;
  NvidiaSmiOptions r;
  r.server = "n";
  r.time_zone = LocalTimeZone::Parse("-05:00").value();
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(text, "n.csv", r);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_EQ(t->power_field.rfind("power.draw.average", 0), 0u) << t->power_field;
  EXPECT_NEAR(t->gpus[1].samples[1].time_s, 1715299200.5, 1e-6);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].power_w, 301.25);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].sm_clock_mhz, 1200);
}

TEST(NvidiaSmiCsvWriterTest, NoUnitsPrintsBareNumbers) {
  PowerTelemetry avg;
  avg.gpus = {{"n", "0", {{0.25, 85.5, 1410}}}};
  NvidiaSmiCsvOptions w;
  w.units = false;
  const std::string text = NvidiaSmiCsvText(avg, avg, w);
  EXPECT_EQ(text,
            "timestamp, index, uuid, power.draw, power.draw.average, power.draw.instant, clocks.sm\n"
            "1970/01/01 00:00:00.250, 0, " +
                text.substr(text.find("GPU-"), text.find(", 85.50") - text.find("GPU-")) +
                ", 85.50, 85.50, 85.50, 1410\n");
}

TEST(VllmMetricsCsvWriterTest, ReadsBackWithCounterResetsAddedBack) {
  ServingLoadSeries s{"node-a", {}};
  for (int i = 0; i < 4; ++i) {
    ServingLoadSample x;
    x.time_s = 1715299200 + i;
    x.running = i;
    x.waiting = 0;
    x.prompt_tokens = 100.0 * i;
    x.generation_tokens = 10.0 * i;
    s.samples.push_back(x);
  }
  std::string text = VllmMetricsCsvText(s);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "time,vllm:num_requests_running,vllm:num_requests_waiting,vllm:prompt_tokens_total,"
            "vllm:generation_tokens_total");
  text += "1715299204.000,1,0,50,5\n";  // the server restarted: the counters start again
  ServingLoadOptions o;
  o.server = "node-a";
  Result<ServingLoadTelemetry> t = ParseServingLoadCsv(text, "node-a.csv", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->servers.size(), 1u);
  ASSERT_EQ(t->servers[0].samples.size(), 5u);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[4].prompt_tokens, 350);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[4].generation_tokens, 35);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[3].running, 3);
}

TEST(AgentReadingsStreamWriterTest, WritesWhatTheAgentWritesAndReadsBack) {
  PowerTelemetry gpus;
  gpus.gpus = {{"n", "0", {{1715299200.25, 85.5, 1410}, {1715299200.5, 300.25, 1200}}},
               {"n", "1", {{1715299200.25, 86.5, 1410}, {1715299200.5, 301.25, 1200}}}};
  ServerPowerSeries server{"n", {{1715299200.25, 1900}, {1715299200.5, 2400}}};
  const std::string text = AgentReadingsStreamText(gpus, &server, 400);
  EXPECT_EQ(text.rfind("{\"gpus\":[{\"energy_mj\":0,\"errors\":{},\"index\":0,\"power_limit_w\":400.0,", 0), 0u)
      << text;
  Result<PowerTelemetry> t = ParseAgentReadingsStream(text, "n.ndjson", "n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].power_w, 301.25);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].sm_clock_mhz, 1200);
  ASSERT_EQ(t->servers.size(), 1u);  // Redfish power is a measurement: kept
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].power_w, 2400);
}

}  // namespace
}  // namespace wattcut::telemetry
