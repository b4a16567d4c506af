#include "wattcut/telemetry/prometheus_power.h"

#include <gtest/gtest.h>

#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

std::string Series(const std::string& labels, const std::string& values) {
  return R"({"metric":{)" + labels + R"(},"values":)" + values + "}";
}

Result<PowerTelemetry> Read(const std::string& series, PrometheusPowerOptions options = {}) {
  Result<PrometheusMatrix> m = ParsePrometheusMatrix(
      R"({"status":"success","data":{"resultType":"matrix","result":[)" + series + "]}}", "q.json");
  if (!m.ok()) return m.error();
  return PowerFromPrometheus(*m, options);
}

std::string PowerErrorOf(const std::string& series, PrometheusPowerOptions options = {}) {
  Result<PowerTelemetry> t = Read(series, options);
  return t.ok() ? "(parsed)" : t.error().message;
}

TEST(PrometheusPower, DcgmPowerWithClocksGroupedByHostname) {
  Result<PrometheusMatrix> m = ReadPrometheusMatrix(kTestdata + "/prometheus/dcgm_power.json");
  ASSERT_TRUE(m.ok());
  Result<PowerTelemetry> t = PowerFromPrometheus(*m, {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "prometheus");
  ASSERT_EQ(t->gpus.size(), 3u);
  EXPECT_EQ(t->gpus[0].server, "node-a");
  EXPECT_EQ(t->gpus[0].gpu, "0");
  ASSERT_EQ(t->gpus[0].samples.size(), 3u);  // the NaN is skipped
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].sm_clock_mhz, 1755);
  EXPECT_TRUE(std::isnan(t->gpus[1].samples[0].sm_clock_mhz));
  EXPECT_EQ(t->gpus[2].server, "node-b");
  ASSERT_FALSE(t->notes.empty());
  EXPECT_NE(t->notes[0].find("1 samples were NaN or infinite"), std::string::npos);
  EXPECT_NE(t->power_field.find("DCGM_FI_DEV_POWER_USAGE"), std::string::npos);
  // Another label names the servers when asked.
  Result<PowerTelemetry> by_instance = PowerFromPrometheus(*m, {"instance", ""});
  ASSERT_TRUE(by_instance.ok());
  EXPECT_EQ(by_instance->gpus[0].server, "10.0.0.11:9400");
}

TEST(PrometheusPower, SeriesOfOneGpuAreJoined) {
  // dcgm-exporter's pod label changed: two series of one GPU.
  Result<PowerTelemetry> t = Read(
      Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0","pod":"x")", R"([[1,"10"],[2,"11"]])") +
      "," +
      Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0","pod":"y")", R"([[2,"11"],[3,"12"]])"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 1u);
  EXPECT_EQ(t->gpus[0].samples.size(), 3u);
  EXPECT_NE(
      PowerErrorOf(
          Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0","pod":"x")", R"([[1,"10"]])") + "," +
          Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0","pod":"y")", R"([[1,"12"]])"))
          .find("q.json: data.result[1].values[0]: a second value at time 1"),
      std::string::npos);
}

TEST(PrometheusPower, ServerPowerSeries) {
  Result<PowerTelemetry> t =
      Read(Series(R"("__name__":"wattcut_agent_server_power_watts","instance":"a:9500","source":"redfish")",
                  R"([[1,"4000"],[2,"4100"]])") +
               "," +
               Series(R"("__name__":"wattcut_agent_server_power_watts","instance":"b:9500","source":"model")",
                      R"([[1,"3000"]])") +
               "," + Series(R"("__name__":"bmc_power_watts","instance":"c")", R"([[1,"5000"]])"),
           {"", "bmc_power_watts"});
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->servers.size(), 2u);
  EXPECT_EQ(t->servers[0].server, "a:9500");
  EXPECT_DOUBLE_EQ(t->servers[0].samples[1].power_w, 4100);
  EXPECT_EQ(t->servers[1].server, "c");
  bool model_noted = false;
  for (const std::string& n : t->notes) model_noted |= n.find("source=\"model\"") != n.npos;
  EXPECT_TRUE(model_noted);
  // Only the model estimate: no power, and the error says why.
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"wattcut_agent_server_power_watts","instance":"b","source":"model")",
                                R"([[1,"3000"]])"))
                .find("the agent's model estimate"),
            std::string::npos);
}

TEST(PrometheusPower, RefusesWhatIsNotPower) {
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"a","gpu":"0")", R"([[1,"50"]])"))
                .find("data.result[0].metric: metric 'DCGM_FI_DEV_GPU_TEMP' is not a power series"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf(Series(R"("Hostname":"a","gpu":"0")", R"([[1,"50"]])")).find("no __name__ label"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0")", R"([[1,"50"]])"))
                .find("neither a Hostname nor an instance label"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a")", R"([[1,"50"]])"))
                .find("neither a gpu nor a UUID label"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0")", R"([[1,"-5"]])"))
                .find("data.result[0].values[0][1]: expected a power in watts >= 0"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf(Series(R"("__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0")", R"([[1,"5"]])"),
                         {"rack", ""})
                .find("no label 'rack'"),
            std::string::npos);
  EXPECT_NE(PowerErrorOf("").find("data.result is empty"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::telemetry
