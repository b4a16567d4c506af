#include "wattcut/polca/telemetry_power_trace.h"

#include <gtest/gtest.h>

namespace wattcut::polca {
namespace {

using telemetry::GpuPowerSeries;
using telemetry::PowerTelemetry;

ServerSpec Spec() {
  ServerSpec s;
  s.gpus = 2;
  s.other_idle_w = 1000;
  s.other_w_per_gpu_w = 0.1;
  return s;
}

TEST(TelemetryPowerTrace, GpusAloneUseTheConfigsNonGpuModel) {
  PowerTelemetry t;
  t.source = "smi";
  // GPU 1 is sampled 2 ms and 3 ms after GPU 0; its third reading is late (0.7 s): that time is dropped.
  t.gpus.push_back({"a", "0", {{100.0, 200}, {101.0, 300}, {102.0, 400}, {103.0, 400}}});
  t.gpus.push_back({"a", "1", {{100.002, 100}, {101.003, 100}, {102.7, 100}, {103.001, 50}}});
  Result<TelemetryPowerTrace> r = PowerTraceFromTelemetry(t, Spec());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->modelled_servers, 1);
  ASSERT_EQ(r->trace.servers().size(), 1u);
  const auto& s = r->trace.servers()[0].samples;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_DOUBLE_EQ(s[0].time_s, 0);
  EXPECT_DOUBLE_EQ(s[0].power_w, 1000 + 300 * 1.1);
  EXPECT_DOUBLE_EQ(s[1].power_w, 1000 + 400 * 1.1);
  EXPECT_DOUBLE_EQ(s[2].time_s, 3);
  EXPECT_DOUBLE_EQ(s[2].power_w, 1000 + 450 * 1.1);
  std::string notes;
  for (const std::string& n : r->notes) notes += n + "\n";
  EXPECT_NE(notes.find("1 sample times of a server were dropped"), std::string::npos) << notes;
  EXPECT_NE(notes.find("power from GPUs alone: non-GPU part from the config's model"), std::string::npos) << notes;
}

TEST(TelemetryPowerTrace, AMeasuredServerSeriesIsTheServersPower) {
  PowerTelemetry t;
  t.source = "agent";
  t.gpus.push_back({"a", "0", {{10, 300}, {11, 300}}});
  t.servers.push_back({"a", {{10, 4000}, {11, 4100}}});
  t.gpus.push_back({"b", "0", {{10.5, 300}}});
  Result<TelemetryPowerTrace> r = PowerTraceFromTelemetry(t, Spec());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->measured_servers, 1);
  EXPECT_EQ(r->modelled_servers, 1);
  ASSERT_EQ(r->trace.servers().size(), 2u);
  EXPECT_EQ(r->trace.servers()[0].name, "a");
  EXPECT_DOUBLE_EQ(r->trace.servers()[0].samples[1].power_w, 4100);
  EXPECT_DOUBLE_EQ(r->trace.servers()[1].samples[0].time_s, 0.5);
  EXPECT_DOUBLE_EQ(r->trace.span_s(), 1);
}

TEST(PowerTraceFromServers, ChecksWhatTheCsvChecks) {
  EXPECT_FALSE(PowerTrace::FromServers("x", "", {}).ok());
  TracedServer a{"a", false, Priority::kHigh, {{1, 5}, {1, 6}}};
  EXPECT_NE(PowerTrace::FromServers("x", "", {a}).error().message.find("increasing time"), std::string::npos);
  TracedServer b{"b", false, Priority::kHigh, {{1, -5}}};
  EXPECT_NE(PowerTrace::FromServers("x", "", {b}).error().message.find("expected >= 0"), std::string::npos);
  TracedServer c{"c", false, Priority::kHigh, {{1, 5}}};
  EXPECT_NE(PowerTrace::FromServers("x", "", {c, c}).error().message.find("named twice"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::polca
