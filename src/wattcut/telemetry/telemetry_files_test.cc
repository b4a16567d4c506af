#include <gtest/gtest.h>

#include "wattcut/telemetry/nvidia_smi_csv_reader.h"
#include "wattcut/telemetry/nvidia_smi_csv_writer.h"
#include "wattcut/telemetry/vllm_metrics_csv_reader.h"
#include "wattcut/telemetry/vllm_metrics_csv_writer.h"

namespace wattcut::telemetry {
namespace {

// As nvidia-smi 550 prints `--query-gpu=timestamp,index,uuid,power.draw,power.draw.average,
// power.draw.instant,clocks.sm --format=csv -lms 250` on two GPUs, one reading not supported.
constexpr char kNvidiaSmi[] =
    "timestamp, index, uuid, power.draw [W], power.draw.average [W], power.draw.instant [W], clocks.sm [MHz]\n"
    "2024/05/10 02:00:00.250, 0, GPU-5c8e1a9b-8f7e-2c43-91d2-0a6b9c1f3e77, 85.59 W, 85.59 W, 86.01 W, 1410 MHz\n"
    "2024/05/10 02:00:00.251, 1, GPU-0b2d6e4f-1a3c-7d85-b6e9-4f2a8c0d5b13, 84.10 W, 84.10 W, 83.87 W, 1410 MHz\n"
    "2024/05/10 02:00:00.500, 0, GPU-5c8e1a9b-8f7e-2c43-91d2-0a6b9c1f3e77, 301.20 W, 301.20 W, 395.44 W, 1410 MHz\n"
    "2024/05/10 02:00:00.501, 1, GPU-0b2d6e4f-1a3c-7d85-b6e9-4f2a8c0d5b13, [N/A], [N/A], [N/A], 1410 MHz\n";

TEST(NvidiaSmiCsvTest, ReadsTheFileAsNvidiaSmiPrintsIt) {
  NvidiaSmiReadOptions o;
  o.utc_offset_minutes = 120;
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(kNvidiaSmi, "node-a.csv", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "nvidia-smi");
  EXPECT_EQ(t->power_field.rfind("power.draw.average", 0), 0u) << t->power_field;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_EQ(t->gpus[0].server, "node-a");
  EXPECT_EQ(t->gpus[0].gpu, "0");
  ASSERT_EQ(t->gpus[0].samples.size(), 2u);
  EXPECT_EQ(t->gpus[1].samples.size(), 1u);  // the [N/A] reading is skipped
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].power_w, 301.20);
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[0].sm_clock_mhz, 1410);
  // 02:00 at UTC+2 is midnight UTC: 2024-05-10T00:00:00.250Z.
  EXPECT_NEAR(t->gpus[0].samples[0].time_s, 1715299200.25, 1e-6);
  ASSERT_EQ(t->notes.size(), 1u);
  EXPECT_NE(t->notes[0].find("1 readings"), std::string::npos) << t->notes[0];
}

TEST(NvidiaSmiCsvTest, NoUnitsAndPowerDrawAlone) {
  const std::string text =
      "timestamp, index, power.draw, clocks.sm\n"
      "2024/05/10 00:00:00.000, 0, 85.59, 1410\n"
      "2024/05/10 00:00:01.000, 0, 90.00, 1200\n";
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(text, "b.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->power_field.rfind("power.draw (", 0), 0u) << t->power_field;
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].sm_clock_mhz, 1200);
  EXPECT_NE(t->notes.back().find("taken as UTC"), std::string::npos);
}

TEST(NvidiaSmiCsvTest, BadInputNamesFileLineAndColumn) {
  struct Case {
    std::string text, expect;
  } cases[] = {
      {"2024/05/10 00:00:00.000, 0, 85.59 W\n", "noheader"},
      {"timestamp, index, clocks.sm [MHz]\n2024/05/10 00:00:00.000, 0, 1410 MHz\n", "no power column"},
      {"timestamp, index, power.draw [W]\n2024-05-10 00:00:00, 0, 85 W\n", "x.csv:2: column"},
      {"timestamp, index, power.draw [W]\n2024/05/10 00:00:00.000, 0, -5 W\n", "expected watts"},
      {"timestamp, index, power.draw [W]\n2024/05/10 00:00:00.000, 0, 85 kW\n", "expected watts"},
      {"timestamp, power.draw [W]\n2024/05/10 00:00:00.000, 85 W\n2024/05/10 00:00:00.000, 86 W\n", "one GPU per file"},
      {"timestamp, index, power.draw [W]\n2024/05/10 00:00:00.000, 0\n", "x.csv"},
      {"timestamp, index, power.draw [W], clocks.sm [MHz]\n2024/05/10 00:00:00.000, 0, 85 W, fast\n",
       "expected a clock"},
  };
  for (const Case& c : cases) {
    Result<PowerTelemetry> t = ParseNvidiaSmiCsv(c.text, "x.csv", {});
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().message.find(c.expect), std::string::npos) << t.error().message;
  }
}

TEST(NvidiaSmiCsvTest, WhatTheWriterPrintsReadsBack) {
  PowerTelemetry avg, inst;
  avg.gpus = {{"n", "0", {{1715299200.25, 85.5, 1410}, {1715299200.5, 300.25, 1200}}},
              {"n", "1", {{1715299200.25, 86.5, 1410}, {1715299200.5, 301.25, 1200}}}};
  inst = avg;
  NvidiaSmiCsvOptions w;
  w.utc_offset_minutes = -300;
  const std::string text = NvidiaSmiCsvText(avg, inst, w);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "timestamp, index, uuid, power.draw [W], power.draw.average [W], power.draw.instant [W], clocks.sm [MHz]");
  EXPECT_NE(text.find("2024/05/09 19:00:00.250, 0, GPU-"), std::string::npos) << text;
  NvidiaSmiReadOptions r;
  r.utc_offset_minutes = -300;
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(text, "n.csv", r);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_NEAR(t->gpus[1].samples[1].time_s, 1715299200.5, 1e-6);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].power_w, 301.25);
  EXPECT_DOUBLE_EQ(t->gpus[1].samples[1].sm_clock_mhz, 1200);
}

TEST(UtcOffsetTest, ParsesOffsetsAndRefusesOthers) {
  EXPECT_EQ(ParseUtcOffset("+02:00").value(), 120);
  EXPECT_EQ(ParseUtcOffset("-05:30").value(), -330);
  EXPECT_EQ(ParseUtcOffset("Z").value(), 0);
  EXPECT_FALSE(ParseUtcOffset("2").ok());
  EXPECT_FALSE(ParseUtcOffset("+25:00").ok());
  EXPECT_FALSE(ParseUtcOffset("Europe/Berlin").ok());
}

TEST(VllmMetricsCsvTest, RoundTripAndCounterResets) {
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
  Result<ServingLoadTelemetry> t = ParseVllmMetricsCsv(text, "node-a.csv", "");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->servers[0].samples.size(), 5u);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[4].prompt_tokens, 350);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[4].generation_tokens, 35);
  EXPECT_NE(t->notes[0].find("2 counter resets"), std::string::npos) << t->notes[0];
}

TEST(VllmMetricsCsvTest, BadInputNamesTheColumn) {
  struct Case {
    std::string text, expect;
  } cases[] = {
      {"time,vllm:num_requests_runing,vllm:prompt_tokens_total,vllm:generation_tokens_total\n1,0,0,0\n",
       "column 'vllm:num_requests_runing': not a vLLM metric"},
      {"time,vllm:num_requests_running,vllm:prompt_tokens_total\n1,0,0\n2,0,0\n", "vllm:generation_tokens_total"},
      {"time,vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n2,0,0,0\n1,0,0,0\n",
       "x.csv:3"},
      {"time,vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n1,-1,0,0\n2,0,0,0\n",
       "x.csv:2: column 'vllm:num_requests_running'"},
      {"vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n1,0,0\n", "'time'"},
  };
  for (const Case& c : cases) {
    Result<ServingLoadTelemetry> t = ParseVllmMetricsCsv(c.text, "x.csv", "");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_NE(t.error().message.find(c.expect), std::string::npos) << t.error().message;
  }
}

}  // namespace
}  // namespace wattcut::telemetry
