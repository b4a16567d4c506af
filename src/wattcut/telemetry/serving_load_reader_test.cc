#include "wattcut/telemetry/serving_load_reader.h"

#include <gtest/gtest.h>

#include <cmath>

#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

std::string CsvError(const std::string& text) {
  Result<ServingLoadTelemetry> t = ParseServingLoadCsv(text, "load.csv", {});
  return t.ok() ? "(parsed)" : t.error().message;
}

TEST(ServingLoadReader, CsvWithACounterReset) {
  Result<ServingLoadTelemetry> t = ReadServingLoad(kTestdata + "/vllm/load.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "vllm-csv");
  ASSERT_EQ(t->servers.size(), 2u);
  const auto& a = t->servers[0].samples;
  ASSERT_EQ(a.size(), 4u);
  EXPECT_DOUBLE_EQ(a[0].prompt_tokens, 0);  // cumulative from the first sample
  EXPECT_DOUBLE_EQ(a[1].prompt_tokens, 6200);
  // node-a restarted between 12:00:05 and 12:00:10: 156200 is added back.
  EXPECT_DOUBLE_EQ(a[2].prompt_tokens, 156200 + 1200 - 150000);
  EXPECT_DOUBLE_EQ(a[3].generation_tokens, 43900 + 2100 - 42000);
  EXPECT_DOUBLE_EQ(a[2].running, 3);
  EXPECT_TRUE(std::isnan(a[0].first_tokens));  // not in the file
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("1 counter resets of vllm:prompt_tokens_total"), std::string::npos) << notes;
}

// Gauges that are not whole requests are read and said so; gauges and counters beyond what a server
// holds are refused (before: 10^11 running requests and fractional gauges passed without a word).
TEST(ServingLoadReader, FractionalGaugesAreNotedAndImpossibleValuesRefused) {
  const std::string header = "time,vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n";
  Result<ServingLoadTelemetry> t = ParseServingLoadCsv(header + "1,2.5,0,0\n2,3,10,5\n3,0.25,20,9\n", "load.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_DOUBLE_EQ(t->servers[0].samples[0].running, 2.5);
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("load.csv: 2 samples of vllm:num_requests_running are not whole requests"), std::string::npos)
      << notes;
  EXPECT_EQ(CsvError(header + "1,1e11,0,0\n"),
            "load.csv:2: column 'vllm:num_requests_running': expected vllm:num_requests_running at most 1e+06 "
            "(requests in one engine), got 1e+11");
  EXPECT_NE(CsvError(header + "1,1,1e300,0\n").find("expected vllm:prompt_tokens_total at most 1e+15"),
            std::string::npos);
}

TEST(ServingLoadReader, PrometheusSumsSeriesOfOneMetric) {
  Result<ServingLoadTelemetry> t = ReadServingLoad(kTestdata + "/vllm/load_prometheus.json", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "prometheus");
  ASSERT_EQ(t->servers.size(), 1u);
  EXPECT_EQ(t->servers[0].server, "10.0.0.11:8000");
  ASSERT_EQ(t->servers[0].samples.size(), 2u);
  // finished_reason stop + length: 310 then 318, cumulative from the first.
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].finished_requests, 8);
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].running, 14);
}

// A recorder's own file (issue 52): `timestamp`, names without the vllm: prefix, the iteration
// histogram's sum and count, metrics the fit does not use, CRLF line ends; no TTFT or success counter.
TEST(ServingLoadReader, ARecordersFileIsReadAsItIs) {
  const std::string text =
      "timestamp,num_requests_running,num_requests_waiting,gpu_cache_usage_perc,prompt_tokens_total,"
      "generation_tokens_total,iteration_tokens_total_sum,iteration_tokens_total_count,"
      "request_prefill_time_seconds_sum,prefix_cache_hits_total\r\n"
      "1784415445.639233,0.0,0.0,3.9e-05,1.0,1.0,2.0,1.0,0.024,0.0\r\n"
      "1784415445.8950303,2.0,1.0,0.01,812.0,4.0,816.0,3.0,0.031,512.0\r\n";
  Result<ServingLoadTelemetry> t = ParseServingLoadCsv(text, "engine.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->servers.size(), 1u);
  const auto& s = t->servers[0].samples;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[1].running, 2);
  EXPECT_DOUBLE_EQ(s[1].waiting, 1);
  EXPECT_DOUBLE_EQ(s[1].prompt_tokens, 811);
  EXPECT_DOUBLE_EQ(s[1].iterations, 2);
  EXPECT_DOUBLE_EQ(s[1].iteration_tokens, 814);
  EXPECT_DOUBLE_EQ(s[1].cached_prompt_tokens, 512);
  EXPECT_TRUE(std::isnan(s[1].first_tokens));
  EXPECT_EQ(t->engine, "vllm");
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("columns not used: gpu_cache_usage_perc, request_prefill_time_seconds_sum"), std::string::npos)
      << notes;
}

TEST(ServingLoadReader, SGLangsNamesAndAFileWithoutTokenCountersAreRead) {
  Result<ServingLoadTelemetry> t = ParseServingLoadCsv(
      "time,sglang:num_running_reqs,sglang:num_queue_reqs,sglang:prompt_tokens_total,sglang:generation_tokens_total\n"
      "1,0,0,0,0\n2,3,1,900,12\n",
      "sglang.csv", {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->engine, "sglang");
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].waiting, 1);
  Result<ServingLoadTelemetry> bare =
      ParseServingLoadCsv("time,vllm:num_requests_running\n1,0\n2,3\n", "running.csv", {});
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  std::string notes;
  for (const std::string& n : bare->notes) notes += n + "\n";
  EXPECT_NE(notes.find("no vllm:prompt_tokens_total and vllm:generation_tokens_total"), std::string::npos) << notes;
}

TEST(ServingLoadReader, RefusesWithPlaceAndField) {
  const std::string h = "time,vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n";
  EXPECT_EQ(CsvError("time,vllm:num_requests_runing\n1,2\n")
                .rfind("load.csv:1: column 'vllm:num_requests_runing' is not a metric read here; did you mean "
                       "'vllm:num_requests_running'?",
                       0),
            0u);
  EXPECT_NE(CsvError("time,vllm:num_requests_waiting\n1,2\n")
                .find("missing vllm:num_requests_running and vllm:iteration_tokens_total_count"),
            std::string::npos);
  EXPECT_NE(CsvError("time,num_requests_running,vllm:num_requests_running\n1,2,2\n")
                .find("names vllm:num_requests_running a second time"),
            std::string::npos);
  EXPECT_NE(
      CsvError(h + "1,-1,0,0\n").find("load.csv:2: column 'vllm:num_requests_running': expected a finite number >= 0"),
      std::string::npos);
  EXPECT_NE(CsvError(h + "1,NaN,0,0\n").find("got 'NaN'"), std::string::npos);
  EXPECT_NE(CsvError(h + "1,1e999,0,0\n").find("column 'vllm:num_requests_running'"), std::string::npos);
  EXPECT_NE(CsvError(h + "2,1,0,0\n1,1,0,0\n").find("load.csv:3: column 'time': the rows of server"),
            std::string::npos);
  EXPECT_NE(CsvError(h + "2,1,0,0\n2,1,0,0\n").find("the same time as line 2"), std::string::npos);
  EXPECT_NE(CsvError(h + "2024-05-01T12:00:00Z,1,0,0\n5,1,0,0\n").find("expected an ISO 8601 time like the first"),
            std::string::npos);
  EXPECT_NE(CsvError("server,time\n").find("expected the first column 'time'"), std::string::npos);
  EXPECT_NE(CsvError(h).find("no rows after the header"), std::string::npos);
  EXPECT_NE(CsvError("").find("load.csv"), std::string::npos);
  EXPECT_NE(CsvError(std::string("\x7f\x45LF\0\x01", 6)).find("load.csv"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::telemetry
