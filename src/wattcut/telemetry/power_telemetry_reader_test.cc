#include "wattcut/telemetry/power_telemetry_reader.h"

#include <gtest/gtest.h>

#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

TEST(PowerTelemetryReader, FormatNames) {
  EXPECT_EQ(*ParsePowerFormat("nvidia-smi"), PowerFormat::kNvidiaSmi);
  EXPECT_EQ(*ParsePowerFormat("auto"), PowerFormat::kAuto);
  EXPECT_NE(ParsePowerFormat("dcgm").error().message.find("expected a power format auto, wattcut"), std::string::npos);
  for (PowerFormat f : {PowerFormat::kWattcut, PowerFormat::kPrometheus, PowerFormat::kAgent}) {
    EXPECT_EQ(*ParsePowerFormat(PowerFormatName(f)), f);
  }
}

TEST(PowerTelemetryReader, DetectsFromTheFirstBytes) {
  EXPECT_EQ(DetectPowerFormat("timestamp, index, power.draw [W]\n")->format, PowerFormat::kNvidiaSmi);
  EXPECT_EQ(DetectPowerFormat("{\"status\":\"success\"")->format, PowerFormat::kPrometheus);
  EXPECT_EQ(DetectPowerFormat("{\"gpus\":[")->format, PowerFormat::kAgent);
  EXPECT_EQ(DetectPowerFormat("{\"time_s\":1")->format, PowerFormat::kAgent);
  EXPECT_EQ(DetectPowerFormat("time,server,power_w\n")->format, PowerFormat::kWattcut);
  EXPECT_FALSE(DetectPowerFormat("").has_value());
  EXPECT_FALSE(DetectPowerFormat("\x1f\x8b\x08").has_value());
  EXPECT_FALSE(DetectPowerFormat("{\"x\":1}").has_value());
}

TEST(PowerTelemetryReader, EachFormatByDetection) {
  PowerReadOptions o;
  Result<PowerTelemetry> smi = ReadPowerTelemetry(kTestdata + "/nvidia-smi/node-a.csv", PowerFormat::kAuto, o);
  ASSERT_TRUE(smi.ok()) << smi.error().message;
  EXPECT_EQ(smi->format, "nvidia-smi");
  Result<PowerTelemetry> prom = ReadPowerTelemetry(kTestdata + "/prometheus/dcgm_power.json", PowerFormat::kAuto, o);
  ASSERT_TRUE(prom.ok()) << prom.error().message;
  EXPECT_EQ(prom->format, "prometheus");
  Result<PowerTelemetry> agent = ReadPowerTelemetry(kTestdata + "/agent/node-c.ndjson", PowerFormat::kAgent, o);
  ASSERT_TRUE(agent.ok()) << agent.error().message;
  EXPECT_EQ(agent->gpus[0].server, "node-c");
}

TEST(PowerTelemetryReader, AFolderIsOneServerAFile) {
  PowerReadOptions o;
  o.time_zone = *LocalTimeZone::Parse("+02:00");
  Result<PowerTelemetry> t = ReadPowerTelemetry(kTestdata + "/nvidia-smi-folder", PowerFormat::kAuto, o);
  ASSERT_TRUE(t.ok()) << t.error().message;  // .keep is hidden, skipped
  ASSERT_EQ(t->gpus.size(), 4u);
  EXPECT_EQ(t->gpus[0].server, "node-01");
  EXPECT_EQ(t->gpus[3].server, "node-02");
  EXPECT_EQ(t->source, kTestdata + "/nvidia-smi-folder");
}

TEST(PowerTelemetryReader, RefusesTheWrongFormatByName) {
  Result<PowerTelemetry> t = ReadPowerTelemetry(kTestdata + "/nvidia-smi/node-a.csv", PowerFormat::kPrometheus, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("node-a.csv looks like nvidia-smi CSV (header 'timestamp, index, uuid, "),
            std::string::npos)
      << t.error().message;
  EXPECT_NE(t.error().message.find("not Prometheus JSON"), std::string::npos);
  // Mixed formats in one folder, and an empty folder.
  EXPECT_NE(ReadPowerTelemetry(kTestdata + "/agent/..", PowerFormat::kAuto, {}).error().message.find("not a power"),
            std::string::npos);
}

}  // namespace
}  // namespace wattcut::telemetry
