#include "wattcut/polca/row_load.h"

#include <gtest/gtest.h>

#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/trace_timeline.h"

namespace wattcut::polca {
namespace {

RequestTrace Trace(int prompt, int generated, int n = 100) {
  std::vector<TraceRequest> requests;
  for (int i = 0; i < n; ++i) requests.push_back({i * 1.0, prompt, generated});
  return *RequestTrace::FromRequests(requests, "t");
}

TEST(RowLoad, ARequestsWorkIsItsPrefillAloneAndItsShareOfFullBatchDecodes) {
  const PolcaConfig config = *BuiltInConfig("a100");
  // 1,000 prompt tokens: 0.02 + 0.28 s; 200 tokens at full batch (32): 200 x (0.047 + 0.016) / 32.
  const double expected = 0.02 + 2.8e-4 * 1000 + 200 * (0.047 + 5e-4 * 32) / 32;
  EXPECT_NEAR(MeanRequestWorkS(config, WorkOf(Trace(1000, 200))), expected, 1e-12);
  EXPECT_EQ(MeanRequestWorkS(config, TraceWork{}), 0);
}

TEST(RowLoad, ARateStaysAndIsReportedAsAUtilization) {
  PolcaConfig config = *BuiltInConfig("a100");
  Result<RowLoad> load = ResolveRowLoad(config, WorkOf(Trace(1000, 200)));
  ASSERT_TRUE(load.ok()) << load.error().message;
  EXPECT_FALSE(load->stated_by_work);
  EXPECT_EQ(config.workload.peak_requests_per_server_s, 0.7) << "the config is unchanged";
  EXPECT_DOUBLE_EQ(load->peak_utilization, 0.7 * load->mean_request_work_s);
}

TEST(RowLoad, AUtilizationSetsTheRateSoThatHeavierRequestsComeLessOften) {
  PolcaConfig light = *BuiltInConfig("a100");
  light.workload.peak_utilization = 0.5;
  PolcaConfig heavy = light;
  Result<RowLoad> a = ResolveRowLoad(light, WorkOf(Trace(1000, 200)));
  Result<RowLoad> b = ResolveRowLoad(heavy, WorkOf(Trace(3000, 200)));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->stated_by_work);
  EXPECT_DOUBLE_EQ(a->peak_utilization, 0.5);
  EXPECT_DOUBLE_EQ(b->peak_utilization, 0.5);
  EXPECT_DOUBLE_EQ(light.workload.peak_requests_per_server_s, 0.5 / a->mean_request_work_s);
  EXPECT_LT(heavy.workload.peak_requests_per_server_s, light.workload.peak_requests_per_server_s);
  EXPECT_TRUE(Validate(heavy).ok());
}

TEST(RowLoad, AUtilizationThatNeedsMoreRequestsThanTheBoundIsRefusedWithTheRate) {
  PolcaConfig config = *BuiltInConfig("a100");
  config.service.prompt_s_base = 1e-9;
  config.service.prompt_s_per_token = 1e-9;
  config.service.token_iteration_s_base = 1e-9;
  config.service.token_iteration_s_per_request = 1e-9;
  config.workload.peak_utilization = 1.0;
  Result<RowLoad> load = ResolveRowLoad(config, WorkOf(Trace(1, 1)));
  ASSERT_FALSE(load.ok());
  EXPECT_NE(load.error().message.find("workload.peak_utilization"), std::string::npos) << load.error().message;
  EXPECT_NE(load.error().message.find("requests/s per server"), std::string::npos) << load.error().message;
}

TEST(RowLoad, TheConfigRefusesAUtilizationOutsideZeroToOne) {
  for (const char* text : {"workload.peak_utilization = 1.2\n", "workload.peak_utilization = -0.1\n"}) {
    Result<PolcaConfig> config = ParseConfig(text, "row.conf");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_NE(config.error().message.find("workload.peak_utilization must be 0"), std::string::npos)
        << config.error().message;
  }
  EXPECT_TRUE(ParseConfig("workload.peak_utilization = 0.7\n", "row.conf").ok());
}

TEST(RowLoad, AStreamedTraceIsLoadedByItsBusiestHour) {
  TraceTimeline timeline;
  timeline.span_s = 3 * 3600;
  timeline.hourly_requests = {10, 30, 20};
  timeline.hourly_prompt_tokens = {10 * 100.0, 30 * 2000.0, 20 * 100.0};
  timeline.hourly_generated_tokens = {10 * 10.0, 30 * 50.0, 20 * 10.0};
  const TraceWork work = WorkOf(timeline);
  EXPECT_EQ(work.requests, 30);
  EXPECT_EQ(work.prompt_tokens, 60000);
  EXPECT_EQ(work.generated_tokens, 1500);
}

}  // namespace
}  // namespace wattcut::polca
