// `wattcut polca replay` as an operator runs it: the real binary on a telemetry CSV.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli/command_runner.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

// A config for two servers in a 10 kW row, decisions every second, in-band-like latencies.
std::string WriteConfig(const TempDir& dir) {
  std::string path = dir.path() + "/row.conf";
  std::ofstream(path) << "base = a100\n"
                         "row.baseline_servers = 2\n"
                         "row.budget_w = 10000\n"
                         "control.telemetry_period_s = 1\n"
                         "control.telemetry_delay_s = 1\n"
                         "control.actuation_latency_s = 2\n"
                         "control.brake_latency_s = 1\n";
  return path;
}

// Two servers, ISO times; the row goes from 60 % to 94 % (above T2) and back, b misses 20 s.
std::string WriteTrace(const TempDir& dir) {
  std::string path = dir.path() + "/telemetry.csv";
  std::ofstream out(path);
  out << "time,server,power_w,priority\n";
  for (int t = 0; t < 120; ++t) {
    const int w = t >= 20 && t < 70 ? 4700 : 3000;
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "2024-05-01T12:%02d:%02dZ", t / 60, t % 60);
    out << stamp << ",a," << w << ",high\n";
    if (t < 80 || t > 100) out << stamp << ",b," << w << ",low\n";
  }
  return path;
}

TEST(PolcaReplayCommand, GoodTraceWritesSummaryCsvAndSvg) {
  TempDir dir;
  const std::string out = dir.path() + "/replay";
  auto r =
      RunWattcut("polca replay --power-trace " + WriteTrace(dir) + " --config " + WriteConfig(dir) + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("polca over 2 servers (1 low priority), 120 periods of 1 s: peak 94.0 %"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("wattcut polca replay: warning: server 'b' has no reading from 79 s to 101 s"),
            std::string::npos)
      << r.err;
  nlohmann::json s = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(s["servers"], 2);
  EXPECT_EQ(s["priorities_from"], "trace");
  EXPECT_DOUBLE_EQ(s["row_budget_w"].get<double>(), 10000);
  EXPECT_DOUBLE_EQ(s["row_power"]["before"]["peak"].get<double>(), 0.94);
  EXPECT_LT(s["row_power"]["after"]["energy_kwh"].get<double>(), s["row_power"]["before"]["energy_kwh"].get<double>());
  EXPECT_GT(s["time_in_state_s"]["t1"].get<double>() + s["time_in_state_s"]["t2-low"].get<double>() +
                s["time_in_state_s"]["t2-high"].get<double>(),
            0);
  EXPECT_GT(s["commands"]["low"].get<int>(), 0);
  ASSERT_EQ(s["gaps"].size(), 1u);
  EXPECT_EQ(s["gaps"][0]["server"], "b");
  EXPECT_EQ(s["warnings"].size(), 1u);
  const std::string csv = ReadFile(out + "/row_power.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "time_s,before_w,after_w,before_fraction,after_fraction,state,brake");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 121);
  EXPECT_NE(csv.find("\n0.000,6000.0,6000.0,0.60000,0.60000,normal,0\n"), std::string::npos) << csv.substr(0, 200);
  const std::string svg = ReadFile(out + "/row_power.svg");
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("recorded (before)"), std::string::npos);
  EXPECT_NE(svg.find("T2 89 %"), std::string::npos);
  EXPECT_TRUE(fs::exists(out + "/commands.csv"));
  EXPECT_TRUE(fs::exists(out + "/config.conf"));
}

// Each bad input of the trace reader fails with its file:line: column and writes nothing.
TEST(PolcaReplayCommand, BadTracesAreRefusedWithFileLineAndColumn) {
  TempDir dir;
  const std::string conf = WriteConfig(dir);
  const std::string trace = dir.path() + "/bad.csv";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", trace + ": file is empty (expected a header line)"},
      {"time,server,power_w\n", trace + ": no readings after the header"},
      {"0,a,100\n", trace + ":1: missing column 'time' (expected header time,server,power_w[,priority])"},
      {"time,server,power_w\n0,a,NaN\n",
       trace + ":2: column 'power_w': expected the server's power in watts (a finite number >= 0), got 'NaN'"},
      {"time,server,power_w\n0,a,inf\n",
       trace + ":2: column 'power_w': expected the server's power in watts (a finite number >= 0), got 'inf'"},
      {"time,server,power_w\n0,a,-1\n",
       trace + ":2: column 'power_w': expected the server's power in watts, >= 0 and at most 1000000, got '-1'"},
      {"time,server,power_w,priority\n0,a,100,urgent\n",
       trace + ":2: column 'priority': expected high or low, got 'urgent'"},
      {"time,server,power_w,priority\n0,a,100,high\n1,a,100,low\n",
       trace + ":3: column 'priority': server 'a' changes priority to low (it was high on line 2); a server keeps one "
               "priority"},
      {"time,server,power_w\n2,a,100\n3,b,100\n1,a,100\n",
       trace + ":4: column 'time': the readings of server 'a' must be in increasing time: '1' is earlier than its "
               "reading on line 2"},
      {"time,server,power_w\n2024-05-01T12:00:00Z,a,100\n2024-13-01T12:00:00Z,a,100\n",
       trace + ":3: column 'time': month out of range in '2024-13-01T12:00:00'"},
  };
  for (const auto& [text, message] : cases) {
    std::ofstream(trace) << text;
    const std::string out = dir.path() + "/o";
    auto r = RunWattcut("polca replay --power-trace " + trace + " --config " + conf + " --out " + out);
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_EQ(r.err, "wattcut polca replay: error: " + message + "\n") << text;
    EXPECT_FALSE(fs::exists(out)) << text;
  }
  auto missing = RunWattcut("polca replay --power-trace " + dir.path() + "/none.csv --config " + conf + " --out " +
                            dir.path() + "/o");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.csv: cannot open file for reading"), std::string::npos) << missing.err;
  std::ofstream(trace) << "time,server,power_w\n0,a,100\n";
  auto policy = RunWattcut("polca replay --power-trace " + trace + " --policy best --out " + dir.path() + "/o");
  EXPECT_EQ(policy.exit_code, 1);
  EXPECT_NE(policy.err.find("unknown policy 'best'"), std::string::npos) << policy.err;
}

}  // namespace
}  // namespace wattcut

namespace wattcut {
namespace {

// Telemetry in the formats monitoring writes, through the real binary (issue 27).
class PolcaReplayTelemetry : public ::testing::Test {
 protected:
  nlohmann::json Replay(const std::string& trace_args) {
    const std::string out = dir_.path() + "/replay";
    fs::remove_all(out);
    result_ = testing::RunWattcut("polca replay --power-trace " + trace_args + " --config " + WriteConfig(dir_) +
                                  " --out " + out);
    if (result_.exit_code != 0) return nullptr;
    return nlohmann::json::parse(testing::ReadFile(out + "/summary.json"));
  }
  TempDir dir_;
  testing::CommandResult result_;
};

TEST_F(PolcaReplayTelemetry, NvidiaSmiFolderInAZone) {
  fs::create_directory(dir_.path() + "/smi");
  for (const char* server : {"node-a", "node-b"}) {
    std::ofstream out(dir_.path() + "/smi/" + server + ".csv");
    out << "timestamp, index, power.draw [W], clocks.sm [MHz]\n";
    for (int t = 0; t < 30; ++t) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "2024/05/01 14:00:%02d.000, 0, %.2f W, 1410 MHz\n2024/05/01 14:00:%02d.003, 1, %s, 1410 MHz\n", t,
                    300.0 + t, t, t == 7 ? "[N/A]" : "250.00 W");
      out << line;
    }
  }
  nlohmann::json s = Replay(dir_.path() + "/smi --time-zone Europe/Berlin");
  ASSERT_FALSE(s.is_null()) << result_.err;
  EXPECT_EQ(s["power_trace_format"], "nvidia-smi");
  EXPECT_EQ(s["servers"], 2);
  EXPECT_EQ(s["server_power"], "server power from GPUs alone: non-GPU part from the config's model");
  EXPECT_NE(result_.out.find("server power from GPUs alone: non-GPU part from the config's model"), std::string::npos)
      << result_.out;
  EXPECT_NE(result_.out.find("read as local time in Europe/Berlin"), std::string::npos) << result_.out;
  EXPECT_NE(s["command"].get<std::string>().find("--time-zone Europe/Berlin"), std::string::npos);
}

TEST_F(PolcaReplayTelemetry, PrometheusDcgm) {
  std::ofstream(dir_.path() + "/q.json")
      << R"({"status":"success","data":{"resultType":"matrix","result":[)"
         R"({"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"a","gpu":"0","instance":"10.0.0.1:9400"},"values":[[1714564800,"300"],[1714564801,"310"],[1714564802,"320"]]},)"
         R"({"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"b","gpu":"0","instance":"10.0.0.2:9400"},"values":[[1714564800,"200"],[1714564801,"210"],[1714564802,"220"]]}]}})";
  nlohmann::json s = Replay(dir_.path() + "/q.json --format prometheus");
  ASSERT_FALSE(s.is_null()) << result_.err;
  EXPECT_EQ(s["power_trace_format"], "prometheus");
  EXPECT_EQ(s["servers"], 2);
  // An instant query is refused by name.
  std::ofstream(dir_.path() + "/v.json") << R"({"status":"success","data":{"resultType":"vector","result":[]}})";
  EXPECT_TRUE(Replay(dir_.path() + "/v.json").is_null());
  EXPECT_NE(result_.err.find("data.resultType is 'vector', an instant query's answer"), std::string::npos)
      << result_.err;
}

TEST_F(PolcaReplayTelemetry, AgentStreamWithRedfish) {
  {
    std::ofstream out(dir_.path() + "/node-c.ndjson");
    for (int t = 0; t < 5; ++t) {
      out << R"({"gpus":[{"energy_mj":1,"errors":{},"index":0,"power_limit_w":700.0,"power_w":300.5,"sm_clock_mhz":1980}],)"
          << R"("server":{"gpu_power_w":300.5,"non_gpu_power_w":1700,"power_w":)" << 4000 + t
          << R"(,"redfish_age_s":0.2,"source":"redfish"},"time_s":)" << 1714564800 + t << "}\n";
    }
  }
  nlohmann::json s = Replay(dir_.path() + "/node-c.ndjson");
  ASSERT_FALSE(s.is_null()) << result_.err;
  EXPECT_EQ(s["power_trace_format"], "agent");
  EXPECT_EQ(s["server_power"], "measured (whole-server series)");
  // The same file named as another format is refused by name.
  EXPECT_TRUE(Replay(dir_.path() + "/node-c.ndjson --format nvidia-smi").is_null());
  EXPECT_NE(result_.err.find("node-c.ndjson looks like the agent's readings stream"), std::string::npos) << result_.err;
}

}  // namespace
}  // namespace wattcut
