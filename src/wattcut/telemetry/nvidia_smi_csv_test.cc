#include "wattcut/telemetry/nvidia_smi_csv.h"

#include <gtest/gtest.h>

#include "wattcut/base/iso_time.h"
#include "wattcut/telemetry/testdata_testing.h"

namespace wattcut::telemetry {
namespace {

using testing::kTestdata;

NvidiaSmiOptions Utc() {
  NvidiaSmiOptions o;
  o.server = "node-a";
  o.time_zone = LocalTimeZone::Utc();
  return o;
}

std::string SmiCsvErrorOf(const std::string& text, NvidiaSmiOptions options = Utc()) {
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(text, "smi.csv", options);
  return t.ok() ? "(parsed)" : t.error().message;
}

double Utc(const char* iso) { return *ParseIsoTime(iso); }

TEST(NvidiaSmiCsv, ReadsTheFileAsNvidiaSmiPrintsIt) {
  NvidiaSmiOptions o;
  o.time_zone = *LocalTimeZone::Parse("+02:00");
  Result<PowerTelemetry> t = ReadNvidiaSmiCsv(kTestdata + "/nvidia-smi/node-a.csv", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->format, "nvidia-smi");
  EXPECT_EQ(t->power_field.rfind("power.draw.average (a 1 s average; power.draw.instant is also there", 0), 0u)
      << t->power_field;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_EQ(t->gpus[0].server, "node-a");  // the file's name
  EXPECT_EQ(t->gpus[0].gpu, "0");
  ASSERT_EQ(t->gpus[0].samples.size(), 3u);
  EXPECT_NEAR(t->gpus[0].samples[0].time_s, Utc("2024-05-01T12:00:00.250Z"), 1e-6);
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[0].power_w, 305.10);
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].sm_clock_mhz, 1395);
  // GPU 1's power.draw.average is [N/A] once: that reading is skipped and noted.
  ASSERT_EQ(t->gpus[1].samples.size(), 2u);
  bool noted = false;
  for (const std::string& n : t->notes) noted |= n.find("1 power.draw.average values were not readings") != n.npos;
  EXPECT_TRUE(noted);
}

TEST(NvidiaSmiCsv, PowerFieldOrder) {
  Result<PowerTelemetry> draw = ParseNvidiaSmiCsv(
      "timestamp, index, power.draw [W], power.draw.instant [W]\n"
      "2024/05/01 14:00:00.250, 0, 85.59 W, 90.01 W\n",
      "smi.csv", Utc());
  ASSERT_TRUE(draw.ok()) << draw.error().message;
  EXPECT_EQ(draw->power_field.rfind("power.draw (a 1 s average on Ampere", 0), 0u);
  EXPECT_DOUBLE_EQ(draw->gpus[0].samples[0].power_w, 85.59);
  Result<PowerTelemetry> instant =
      ParseNvidiaSmiCsv("timestamp, power.draw.instant [W]\n2024/05/01 14:00:00.250, 90.01 W\n", "smi.csv", Utc());
  ASSERT_TRUE(instant.ok());
  EXPECT_EQ(instant->power_field.rfind("power.draw.instant (one instant", 0), 0u);
  EXPECT_EQ(instant->gpus[0].gpu, "0");
  EXPECT_TRUE(std::isnan(instant->gpus[0].samples[0].sm_clock_mhz));
}

TEST(NvidiaSmiCsv, AnAverageTheGpuDoesNotReportFallsBackToPowerDrawAndSaysSo) {
  // An A100 (GA100) prints [N/A] for power.draw.average on every row.
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(
      "timestamp, index, power.draw [W], power.draw.average [W], clocks.sm [MHz]\n"
      "2024/05/01 14:00:00.000, 0, 85.59 W, [N/A], 1410 MHz\n"
      "2024/05/01 14:00:00.250, 0, 95.59 W, [N/A], 1410 MHz\n",
      "smi.csv", Utc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->power_field.rfind("power.draw (", 0), 0u) << t->power_field;
  ASSERT_EQ(t->gpus[0].samples.size(), 2u);
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[1].power_w, 95.59);
  bool said = false;
  for (const std::string& n : t->notes)
    said = said || n.find("power.draw.average was not a reading in any row") != std::string::npos;
  EXPECT_TRUE(said);
  // With no other power field, the error stays the first reading's.
  EXPECT_NE(SmiCsvErrorOf("timestamp, index, power.draw.average [W]\n2024/05/01 14:00:00.000, 0, [N/A]\n")
                .find("no power readings (all 1 were power.draw.average N/A"),
            std::string::npos);
}

TEST(NvidiaSmiCsv, NoHeaderNeedsTheQueryAndACutLastLineIsSkipped) {
  NvidiaSmiOptions o = Utc();
  const std::string path = kTestdata + "/nvidia-smi-noheader-nounits.csv";
  Result<PowerTelemetry> refused = ReadNvidiaSmiCsv(path, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("nvidia-smi-noheader-nounits.csv:1: expected nvidia-smi's header"),
            std::string::npos);
  EXPECT_NE(refused.error().message.find("--query timestamp,index,power.draw"), std::string::npos);
  o.query = "timestamp,index,power.draw,clocks.current.sm";
  Result<PowerTelemetry> t = ReadNvidiaSmiCsv(path, o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->gpus.size(), 2u);
  EXPECT_EQ(t->gpus[0].samples.size(), 3u);
  EXPECT_EQ(t->gpus[1].samples.size(), 1u);  // one [Not Supported], one cut short
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[2].sm_clock_mhz, 1395);
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("the last line has no line end"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 power.draw values were not readings"), std::string::npos) << notes;
  // A query that disagrees with the header is refused.
  NvidiaSmiOptions wrong = Utc();
  wrong.query = "timestamp,power.draw";
  EXPECT_NE(SmiCsvErrorOf("timestamp, index, power.draw [W]\n2024/05/01 14:00:00.250, 0, 85.59 W\n", wrong)
                .find("not the query's"),
            std::string::npos);
}

TEST(NvidiaSmiCsv, NoZoneGivenMeansUtcWithANote) {
  Result<PowerTelemetry> t =
      ParseNvidiaSmiCsv("timestamp, power.draw [W]\n2024/05/01 14:00:00.000, 85.59 W\n", "smi.csv", {});
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->gpus[0].samples[0].time_s, Utc("2024-05-01T14:00:00Z"));
  ASSERT_FALSE(t->notes.empty());
  EXPECT_NE(t->notes[0].find("taken as UTC"), std::string::npos);
}

TEST(NvidiaSmiCsv, DaylightSavingTime) {
  NvidiaSmiOptions o = Utc();
  o.time_zone = *LocalTimeZone::Parse("Europe/Berlin");
  // Clocks go back at 03:00 CEST to 02:00 CET on 2024-10-27: 02:59:30 then 02:00:30 again.
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(
      "timestamp, index, power.draw [W]\n"
      "2024/10/27 02:30:00.000, 0, 100.00 W\n"
      "2024/10/27 02:59:30.000, 0, 101.00 W\n"
      "2024/10/27 02:00:30.000, 0, 102.00 W\n"
      "2024/10/27 02:30:00.000, 0, 103.00 W\n",
      "smi.csv", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  const auto& s = t->gpus[0].samples;
  EXPECT_DOUBLE_EQ(s[0].time_s, Utc("2024-10-27T00:30:00Z"));
  EXPECT_DOUBLE_EQ(s[1].time_s, Utc("2024-10-27T00:59:30Z"));
  EXPECT_DOUBLE_EQ(s[2].time_s, Utc("2024-10-27T01:00:30Z"));
  EXPECT_DOUBLE_EQ(s[3].time_s, Utc("2024-10-27T01:30:00Z"));
  // 02:30 on 2024-03-31 never happened in Berlin.
  EXPECT_NE(SmiCsvErrorOf("timestamp, power.draw [W]\n2024/03/31 02:30:00.000, 85.59 W\n", o)
                .find("smi.csv:2: column 'timestamp': local time '2024/03/31 02:30:00.000' does not exist in "
                      "Europe/Berlin"),
            std::string::npos);
}

TEST(NvidiaSmiCsv, BadInputNamesFileLineAndColumn) {
  const std::string h = "timestamp, index, power.draw [W]\n";
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0, -5.00 W\n")
                .find("smi.csv:2: column 'power.draw': expected a GPU's power"),
            std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0, nan W\n").find("got 'nan W'"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0, 1e999 W\n").find("column 'power.draw'"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0, 99999 W\n").find("at most 10000"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024-05-01 14:00:00.000, 0, 5 W\n")
                .find("column 'timestamp': expected nvidia-smi's local time"),
            std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/02/30 14:00:00.000, 0, 5 W\n").find("column 'timestamp'"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, x, 5 W\n").find("column 'index': expected a GPU index"),
            std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0\n").find("smi.csv:2: expected 3 fields separated by ', '"),
            std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:01.000, 0, 5 W\n2024/05/01 14:00:00.000, 0, 5 W\n")
                .find("smi.csv:3: column 'timestamp': GPU 0's readings must be in increasing time: "
                      "'2024/05/01 14:00:00.000' is earlier than its reading on line 2"),
            std::string::npos);
  EXPECT_NE(
      SmiCsvErrorOf(h + "2024/05/01 14:00:01.000, 0, 5 W\n2024/05/01 14:00:01.000, 0, 5 W\n").find("the same time as"),
      std::string::npos);
  // Interleaved GPUs without an id.
  EXPECT_NE(SmiCsvErrorOf("timestamp, power.draw [W]\n2024/05/01 14:00:01.000, 5 W\n2024/05/01 14:00:01.000, 6 W\n")
                .find("no index or uuid field to tell GPUs apart"),
            std::string::npos);
  EXPECT_NE(SmiCsvErrorOf("").find("smi.csv: empty file"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h).find("no power readings after the header"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf("timestamp, index, clocks.sm [MHz]\n").find("no power field"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf("index, power.draw [W]\n0, 5 W\n").find("no timestamp field"), std::string::npos);
  EXPECT_NE(SmiCsvErrorOf(h + "2024/05/01 14:00:00.000, 0, [N/A]\n").find("all 1 were power.draw N/A"),
            std::string::npos);
  // Binary and escape bytes are quoted printable.
  const std::string binary = SmiCsvErrorOf(h + std::string("\x1b[2J\0\xff, 0, 5 W\n", 15));
  EXPECT_EQ(binary.find('\x1b'), std::string::npos);
  EXPECT_NE(binary.find("\\x1b"), std::string::npos) << binary;
}

TEST(NvidiaSmiCsv, RepeatedHeaderIsSkipped) {
  const std::string h = "timestamp, index, power.draw [W]\n";
  Result<PowerTelemetry> t = ParseNvidiaSmiCsv(
      h + "2024/05/01 14:00:00.000, 0, 5 W\n" + h + "2024/05/01 14:10:00.000, 0, 6 W\n", "smi.csv", Utc());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->gpus[0].samples.size(), 2u);
  std::string notes;
  for (const std::string& n : t->notes) notes += n + "\n";
  EXPECT_NE(notes.find("header was repeated 1 times"), std::string::npos) << notes;
}

TEST(NvidiaSmiCsv, DetectsItsHeader) {
  EXPECT_TRUE(LooksLikeNvidiaSmiHeader("timestamp, index, power.draw [W]"));
  EXPECT_TRUE(LooksLikeNvidiaSmiHeader("index, power.draw.instant [W]"));
  EXPECT_FALSE(LooksLikeNvidiaSmiHeader("time,server,power_w"));
}

}  // namespace
}  // namespace wattcut::telemetry
