#include "wattcut/agent/agent_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace wattcut::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The exposition format, read back line by line as a scraper reads it (text format 0.0.4): every
// line is a HELP, a TYPE or a sample; a family has one HELP and one TYPE, before its samples,
// which come together; every sample parses (name, quoted and escaped labels, a number) and no
// series appears twice.
struct ParsedSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order written, unescaped
  double value = 0;
};

struct ParsedMetrics {
  std::map<std::string, std::string> types;
  std::map<std::string, std::string> helps;
  std::vector<ParsedSample> samples;

  std::vector<ParsedSample> Of(const std::string& name) const {
    std::vector<ParsedSample> out;
    for (const ParsedSample& s : samples) {
      if (s.name == name) out.push_back(s);
    }
    return out;
  }
};

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

size_t ReadName(const std::string& line, size_t pos, std::string& name) {
  size_t begin = pos;
  while (pos < line.size() && IsNameChar(line[pos], pos == begin)) ++pos;
  name = line.substr(begin, pos - begin);
  return pos;
}

void ParseExpositionInto(const std::string& text, ParsedMetrics& parsed) {
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "the last line ends with a newline";
  std::istringstream in(text);
  std::string line;
  std::string current_family;
  std::set<std::string> finished_families;
  std::set<std::string> series;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    SCOPED_TRACE("line " + std::to_string(number) + ": " + line);
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::string name;
      size_t end = ReadName(line, 7, name);
      ASSERT_FALSE(name.empty());
      ASSERT_LT(end, line.size());
      ASSERT_EQ(line[end], ' ');
      std::string rest = line.substr(end + 1);
      if (line[2] == 'H') {
        ASSERT_EQ(parsed.helps.count(name), 0u) << "two HELP lines";
        ASSERT_EQ(parsed.types.count(name), 0u) << "HELP after TYPE";
        ASSERT_FALSE(rest.empty());
        parsed.helps[name] = rest;
      } else {
        ASSERT_EQ(parsed.types.count(name), 0u) << "two TYPE lines";
        ASSERT_TRUE(rest == "gauge" || rest == "counter") << rest;
        parsed.types[name] = rest;
      }
      if (name != current_family) {
        ASSERT_EQ(finished_families.count(name), 0u) << "a family split in two";
        if (!current_family.empty()) finished_families.insert(current_family);
        current_family = name;
      }
      continue;
    }
    ASSERT_NE(line[0], '#') << "an unknown comment";
    ParsedSample sample;
    size_t pos = ReadName(line, 0, sample.name);
    ASSERT_FALSE(sample.name.empty());
    ASSERT_EQ(sample.name, current_family) << "a sample outside its family";
    ASSERT_EQ(parsed.types.count(sample.name), 1u) << "a sample before its TYPE";
    ASSERT_EQ(parsed.helps.count(sample.name), 1u) << "a sample without HELP";
    ASSERT_LT(pos, line.size());
    if (line[pos] == '{') {
      ++pos;
      while (true) {
        ASSERT_LT(pos, line.size());
        if (line[pos] == '}') {
          ++pos;
          break;
        }
        std::string label;
        pos = ReadName(line, pos, label);
        ASSERT_FALSE(label.empty());
        ASSERT_LT(pos + 1, line.size());
        ASSERT_EQ(line.substr(pos, 2), "=\"");
        pos += 2;
        std::string value;
        while (true) {
          ASSERT_LT(pos, line.size()) << "an unterminated label value";
          char c = line[pos++];
          if (c == '"') break;
          if (c == '\\') {
            ASSERT_LT(pos, line.size());
            char e = line[pos++];
            ASSERT_TRUE(e == '\\' || e == '"' || e == 'n') << "unknown escape \\" << e;
            value += e == 'n' ? '\n' : e;
          } else {
            ASSERT_GE(static_cast<unsigned char>(c), 0x20) << "a raw control byte";
            value += c;
          }
        }
        for (const auto& [other, unused] : sample.labels) ASSERT_NE(other, label) << "a label twice";
        sample.labels.emplace_back(label, value);
        ASSERT_LT(pos, line.size());
        if (line[pos] == ',') ++pos;
      }
    }
    ASSERT_LT(pos, line.size());
    ASSERT_EQ(line[pos], ' ');
    std::string value_text = line.substr(pos + 1);
    char* end = nullptr;
    sample.value = std::strtod(value_text.c_str(), &end);
    ASSERT_FALSE(value_text.empty());
    ASSERT_EQ(*end, '\0') << "not a number: " << value_text;
    ASSERT_TRUE(series.insert(line.substr(0, pos)).second) << "a series twice";
    parsed.samples.push_back(sample);
  }
}

ParsedMetrics ParseExposition(const std::string& text) {
  ParsedMetrics parsed;
  ParseExpositionInto(text, parsed);
  return parsed;
}

std::string LabelOf(const ParsedSample& sample, const std::string& name) {
  for (const auto& [label, value] : sample.labels) {
    if (label == name) return value;
  }
  return "<absent>";
}

AgentMetricsSnapshot TwoGpus() {
  AgentMetricsSnapshot snapshot;
  snapshot.hostname = "node-1";
  GpuTelemetry a;
  a.index = 0;
  a.uuid = "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52";
  a.name = "NVIDIA A100-SXM4-40GB";
  a.sm_clock_mhz = 1410;
  a.power_w = 266.172;
  a.energy_mj = 123456789012;
  a.leased = true;
  a.ceiling_mhz = 1275;
  a.applied_max_sm_mhz = 1275;
  GpuTelemetry b;
  b.index = 1;
  b.uuid = "GPU-ac37caa9-f740-a02b-0ac6-5958644edaa9";
  b.name = "NVIDIA A100-SXM4-40GB";
  b.sm_clock_mhz = 210;
  b.energy_mj = 42;  // its power could not be read
  snapshot.gpus = {a, b};
  ServerPowerReading server;
  server.power_w = 2100.5;
  server.gpu_power_w = 266.172;
  server.non_gpu_power_w = 2100.5 - 266.172;
  server.source = "redfish";
  server.redfish_age_s = 1.25;
  snapshot.server = server;
  snapshot.stale_redfish_readings = 3;
  return snapshot;
}

TEST(AgentMetrics, DcgmSeriesAsDcgmExporterWritesThem) {
  AgentCounters counters;
  std::string text = RenderAgentMetrics(TwoGpus(), counters);
  const std::string labels0 =
      "{gpu=\"0\",UUID=\"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52\",device=\"nvidia0\","
      "modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"node-1\"}";
  const std::string labels1 =
      "{gpu=\"1\",UUID=\"GPU-ac37caa9-f740-a02b-0ac6-5958644edaa9\",device=\"nvidia1\","
      "modelName=\"NVIDIA A100-SXM4-40GB\",Hostname=\"node-1\"}";
  EXPECT_THAT(text, HasSubstr("# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
                              "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
                              "DCGM_FI_DEV_SM_CLOCK" +
                              labels0 + " 1410\nDCGM_FI_DEV_SM_CLOCK" + labels1 + " 210\n"));
  EXPECT_THAT(text, HasSubstr("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"
                              "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
                              "DCGM_FI_DEV_POWER_USAGE" +
                              labels0 + " 266.172000\n#"));
  EXPECT_THAT(text,
              HasSubstr("# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).\n"
                        "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
                        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" +
                        labels0 + " 123456789012\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels1 + " 42\n"));
  // GPU 1's power could not be read: no sample, not a made-up 0.
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_DEV_POWER_USAGE" + labels1)));
}

// The instant power where the driver has it, and the CPU packages' RAPL energy under
// node_exporter's names (in joules, the DRAM zone's own path; a package without DRAM has none).
TEST(AgentMetrics, InstantPowerAndRaplEnergyParseUnderTheirExportersNames) {
  AgentCounters counters;
  AgentMetricsSnapshot snapshot = TwoGpus();
  snapshot.gpus[0].power_instant_w = 301.5;
  snapshot.cpus = {{0, "/sys/class/powercap/intel-rapl:0", 262143329850, 12'500'000,
                    "/sys/class/powercap/intel-rapl:0/intel-rapl:0:0"},
                   {1, "/sys/class/powercap/intel-rapl:1", 1'000'000, std::nullopt, std::nullopt}};
  ParsedMetrics m = ParseExposition(RenderAgentMetrics(snapshot, counters));
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(m.types["DCGM_FI_DEV_POWER_USAGE_INSTANT"], "gauge");
  ASSERT_EQ(m.Of("DCGM_FI_DEV_POWER_USAGE_INSTANT").size(), 1u);
  EXPECT_EQ(m.Of("DCGM_FI_DEV_POWER_USAGE_INSTANT")[0].value, 301.5);
  EXPECT_EQ(m.types["node_rapl_package_joules_total"], "counter");
  auto package = m.Of("node_rapl_package_joules_total");
  ASSERT_EQ(package.size(), 2u);
  EXPECT_EQ(package[0].value, 262143.32985);
  EXPECT_EQ(LabelOf(package[0], "index"), "0");
  EXPECT_EQ(LabelOf(package[1], "path"), "/sys/class/powercap/intel-rapl:1");
  auto dram = m.Of("node_rapl_dram_joules_total");
  ASSERT_EQ(dram.size(), 1u);
  EXPECT_EQ(dram[0].value, 12.5);
  EXPECT_EQ(LabelOf(dram[0], "path"), "/sys/class/powercap/intel-rapl:0/intel-rapl:0:0");
  // Without the field or RAPL, no family at all.
  const std::string plain = RenderAgentMetrics(TwoGpus(), counters);
  EXPECT_THAT(plain, Not(HasSubstr("DCGM_FI_DEV_POWER_USAGE_INSTANT")));
  EXPECT_THAT(plain, Not(HasSubstr("node_rapl")));
}

TEST(AgentMetrics, TheWholeOutputParsesLineByLine) {
  AgentCounters counters;
  counters.RecordCommand("lock_sm", true);
  counters.RecordCommand("lock_sm", true);
  counters.RecordCommand("lock_sm", false);
  counters.RecordCommand("set_ceiling", true);
  counters.RecordLeaseEnd(LeaseEnd::kHolderExited);
  counters.RecordLeaseEnd(LeaseEnd::kExpired);
  counters.RecordLeaseEnd(LeaseEnd::kExpired);
  counters.RecordNvmlError("NVML_ERROR_NO_PERMISSION");
  ParsedMetrics m = ParseExposition(RenderAgentMetrics(TwoGpus(), counters));
  if (::testing::Test::HasFatalFailure()) return;

  EXPECT_EQ(m.types["DCGM_FI_DEV_SM_CLOCK"], "gauge");
  EXPECT_EQ(m.types["DCGM_FI_DEV_POWER_USAGE"], "gauge");
  EXPECT_EQ(m.types["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"], "counter");
  auto clocks = m.Of("DCGM_FI_DEV_SM_CLOCK");
  ASSERT_EQ(clocks.size(), 2u);
  std::vector<std::string> names;
  for (const auto& [label, value] : clocks[0].labels) names.push_back(label);
  EXPECT_THAT(names, ::testing::ElementsAre("gpu", "UUID", "device", "modelName", "Hostname"));
  EXPECT_EQ(clocks[1].value, 210);
  EXPECT_EQ(LabelOf(clocks[1], "device"), "nvidia1");
  EXPECT_EQ(m.Of("DCGM_FI_DEV_POWER_USAGE").size(), 1u);
  EXPECT_EQ(m.Of("DCGM_FI_DEV_POWER_USAGE")[0].value, 266.172);

  auto server = m.Of("wattcut_agent_server_power_watts");
  ASSERT_EQ(server.size(), 1u);
  EXPECT_EQ(server[0].value, 2100.5);
  EXPECT_EQ(LabelOf(server[0], "source"), "redfish");
  EXPECT_EQ(m.types["wattcut_agent_server_power_watts"], "gauge");
  EXPECT_EQ(m.Of("wattcut_agent_server_gpu_power_watts")[0].value, 266.172);
  EXPECT_DOUBLE_EQ(m.Of("wattcut_agent_server_non_gpu_power_watts")[0].value, 2100.5 - 266.172);
  EXPECT_EQ(m.Of("wattcut_agent_redfish_reading_age_seconds")[0].value, 1.25);
  EXPECT_EQ(m.Of("wattcut_agent_redfish_stale_readings_total")[0].value, 3);
  EXPECT_EQ(m.types["wattcut_agent_redfish_stale_readings_total"], "counter");

  auto leases = m.Of("wattcut_agent_leases_held");
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[0].value, 1);
  EXPECT_EQ(leases[1].value, 0);
  EXPECT_EQ(LabelOf(leases[1], "UUID"), "GPU-ac37caa9-f740-a02b-0ac6-5958644edaa9");
  auto ceilings = m.Of("wattcut_agent_sm_clock_ceiling_mhz");
  ASSERT_EQ(ceilings.size(), 1u);
  EXPECT_EQ(ceilings[0].value, 1275);
  EXPECT_EQ(LabelOf(ceilings[0], "gpu"), "0");
  ASSERT_EQ(m.Of("wattcut_agent_applied_sm_clock_max_mhz").size(), 1u);  // GPU 1 is reset

  std::map<std::pair<std::string, std::string>, double> commands;
  for (const ParsedSample& s : m.Of("wattcut_agent_commands_total")) {
    commands[{LabelOf(s, "command"), LabelOf(s, "outcome")}] = s.value;
  }
  EXPECT_EQ(commands.size(), 3u);
  EXPECT_EQ((commands[{"lock_sm", "ok"}]), 2);
  EXPECT_EQ((commands[{"lock_sm", "error"}]), 1);
  EXPECT_EQ((commands[{"set_ceiling", "ok"}]), 1);

  std::map<std::string, double> ends;
  for (const ParsedSample& s : m.Of("wattcut_agent_lease_ends_total")) ends[LabelOf(s, "reason")] = s.value;
  EXPECT_EQ(ends, (std::map<std::string, double>{
                      {"released", 0}, {"exited", 1}, {"expired", 2}, {"connection_closed", 0}, {"job_ended", 0}}));
  auto nvml = m.Of("wattcut_agent_nvml_errors_total");
  ASSERT_EQ(nvml.size(), 1u);
  EXPECT_EQ(LabelOf(nvml[0], "error"), "NVML_ERROR_NO_PERMISSION");
  EXPECT_EQ(nvml[0].value, 1);
}

TEST(AgentMetrics, NoGpusNoServerStillParses) {
  AgentCounters counters;
  AgentMetricsSnapshot empty;
  ParsedMetrics m = ParseExposition(RenderAgentMetrics(empty, counters));
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_TRUE(m.Of("DCGM_FI_DEV_SM_CLOCK").empty());
  EXPECT_TRUE(m.Of("wattcut_agent_server_power_watts").empty());
  EXPECT_EQ(m.Of("wattcut_agent_lease_ends_total").size(), 5u);
  EXPECT_EQ(m.Of("wattcut_agent_redfish_stale_readings_total")[0].value, 0);
}

// The rule itself: base/prometheus_text_test.cc. Here, that the agent's labels go through it.
TEST(AgentMetrics, LabelValuesAreEscapedAndPrintable) {
  AgentMetricsSnapshot snapshot = TwoGpus();
  snapshot.hostname = "host\"with\\quotes\nand-newline";
  snapshot.gpus[0].name = "Tesla \"T4\"\x7f";
  snapshot.gpus[0].uuid = "GPU-\xff\xfe";
  AgentCounters counters;
  ParsedMetrics m = ParseExposition(RenderAgentMetrics(snapshot, counters));
  if (::testing::Test::HasFatalFailure()) return;
  auto clocks = m.Of("DCGM_FI_DEV_SM_CLOCK");
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(LabelOf(clocks[0], "modelName"), "Tesla \"T4\"\\x7f");
  EXPECT_EQ(LabelOf(clocks[0], "Hostname"), "host\"with\\quotes\\x0aand-newline");
  EXPECT_EQ(LabelOf(clocks[0], "UUID"), "GPU-\\xff\\xfe");
}

TEST(AgentMetrics, CommandAndNvmlErrorLabelsAreBounded) {
  AgentCounters counters;
  for (int i = 0; i < 200; ++i) counters.RecordCommand("command_" + std::to_string(i), true);
  counters.RecordCommand("Bad Name\n", false);
  counters.RecordCommand(std::string(65, 'a'), false);
  for (int i = 0; i < 200; ++i) counters.RecordNvmlError("NVML_ERROR_" + std::to_string(i));
  counters.RecordNvmlError("nvml_lowercase");
  counters.RecordNvmlError("");
  ParsedMetrics m = ParseExposition(RenderAgentMetrics({}, counters));
  if (::testing::Test::HasFatalFailure()) return;
  auto commands = m.Of("wattcut_agent_commands_total");
  EXPECT_LE(commands.size(), 66u);
  double total = 0;
  for (const ParsedSample& s : commands) total += s.value;
  EXPECT_EQ(total, 202);  // nothing is lost: past the bound, commands count as "other"
  EXPECT_GT(counters.commands("other", true), 0u);
  EXPECT_EQ(counters.commands("other", false), 2u);
  EXPECT_EQ(counters.commands("command_0", true), 1u);

  auto errors = m.Of("wattcut_agent_nvml_errors_total");
  EXPECT_LE(errors.size(), 65u);
  total = 0;
  for (const ParsedSample& s : errors) total += s.value;
  EXPECT_EQ(total, 202);
  EXPECT_EQ(counters.nvml_errors("NVML_ERROR_0"), 1u);
  EXPECT_GE(counters.nvml_errors("other"), 2u);
}

TEST(AgentMetrics, CountersAreThreadSafe) {
  AgentCounters counters;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counters] {
      for (int i = 0; i < 2000; ++i) {
        counters.RecordCommand("lock_sm", i % 2 == 0);
        counters.RecordLeaseEnd(LeaseEnd::kReleased);
        counters.RecordNvmlError("NVML_ERROR_UNKNOWN");
        if (i % 500 == 0) (void)RenderAgentMetrics({}, counters);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counters.commands("lock_sm", true), 4000u);
  EXPECT_EQ(counters.commands("lock_sm", false), 4000u);
  EXPECT_EQ(counters.lease_ends(LeaseEnd::kReleased), 8000u);
  EXPECT_EQ(counters.nvml_errors("NVML_ERROR_UNKNOWN"), 8000u);
}

}  // namespace
}  // namespace wattcut::agent
