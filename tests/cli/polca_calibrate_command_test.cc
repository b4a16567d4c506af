// `wattcut polca synthesize` and `polca calibrate` as an operator runs them: files written as
// nvidia-smi and vLLM write them, read back by the real binary, and the fitted config used.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

// The server of docs/polca.md's worked example: the parameters calibrate must find.
const std::string kTruthConf = WATTCUT_SOURCE_DIR "/docs/examples/polca-calibration-truth.conf";
const std::map<std::string, double> kTruth = {
    {"gpu.idle_w", 62},
    {"gpu.prompt_w_small", 250},
    {"gpu.prompt_w_large", 395},
    {"gpu.prompt_tokens_for_peak", 2600},
    {"gpu.token_w_batch1", 150},
    {"gpu.token_w_full_batch", 310},
    {"gpu.prompt_power_freq_exponent", 1.6},
    {"gpu.token_power_freq_exponent", 0.7},
};

TEST(PolcaCalibrateCommand, TheDocsExampleServerIsTheOneTheseTestsCheck) {
  const std::string text = ReadFile(kTruthConf);
  for (const auto& [k, v] : kTruth) {
    std::ostringstream line;
    line << k << " = " << v << "\n";
    EXPECT_NE(text.find(line.str()), std::string::npos) << line.str();
  }
}

std::string WriteTruth(const TempDir&) { return kTruthConf; }

// Expects each of calibration.json's parameters that `truth` names within `tolerance` of it (and
// measured, when asked); returns how many it checked.
int ExpectNearTruth(const nlohmann::json& parameters, const std::map<std::string, double>& truth, double tolerance,
                    bool must_be_measured) {
  int checked = 0;
  for (const auto& p : parameters) {
    auto it = truth.find(p["key"].get<std::string>());
    if (it == truth.end()) continue;
    if (must_be_measured) {
      EXPECT_TRUE(p["measured"].get<bool>()) << p;
    }
    EXPECT_LT(std::abs(p["value"].get<double>() - it->second) / it->second, tolerance) << p;
    ++checked;
  }
  return checked;
}

TEST(PolcaCalibrateCommand, RecoversTheServerFromItsNvidiaSmiAndVllmFiles) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s = RunWattcut("polca synthesize --config " + WriteTruth(dir) + " --trace " + trace +
                      " --utc-offset +02:00 --out " + dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string power = dir.path() + "/data/nvidia-smi/node-a.csv", load = dir.path() + "/data/vllm/node-a.csv";
  const std::string smi = ReadFile(power);
  EXPECT_EQ(smi.substr(0, smi.find('\n')),
            "timestamp, index, uuid, power.draw [W], power.draw.average [W], power.draw.instant [W], clocks.sm [MHz]");
  EXPECT_EQ(smi.find("2024/05/10 02:00:00.250, 0, GPU-"), smi.find('\n') + 1) << smi.substr(0, 300);

  const std::string out = dir.path() + "/cal";
  auto r = RunWattcut("polca calibrate --power " + power + " --load " + load +
                      " --gpu a100 --utc-offset +02:00 --hold-back 50% --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibrated node-a (8 GPUs)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the non-GPU part (server.*) is the base config's model"), std::string::npos) << r.err;
  nlohmann::json c = nlohmann::json::parse(ReadFile(out + "/calibration.json"));
  EXPECT_EQ(ExpectNearTruth(c["parameters"], kTruth, 0.03, true), 8);
  EXPECT_EQ(c["clocks_mhz"].size(), 4u);
  EXPECT_LT(c["held_back"]["all"]["p99_abs_tdp"].get<double>(), 0.05);
  EXPECT_NE(c["power"]["field"].get<std::string>().find("power.draw.average"), std::string::npos);
  for (const char* f : {"calibrated.conf", "calibration_power.svg", "calibration_error.svg"}) {
    EXPECT_TRUE(fs::exists(out + "/" + f)) << f;
  }
  const std::string conf = ReadFile(out + "/calibrated.conf");
  EXPECT_NE(conf.find("# measured (base 80)\ngpu.idle_w = 62"), std::string::npos) << conf.substr(0, 2000);
  EXPECT_NE(conf.find("not measured: no server-level power"), std::string::npos);

  // The fitted config is a config: simulate runs on it.
  auto sim = RunWattcut("polca simulate --config " + out + "/calibrated.conf --trace " + trace +
                        " --servers 4 --duration 20m --out " + dir.path() + "/sim");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
}

// The vLLM CSV as Prometheus answers `curl .../api/v1/query_range --data-urlencode
// 'query={__name__=~"vllm:.*"}'`: one matrix series per metric, labelled by instance.
std::string AsPrometheusRangeQuery(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream header(line);
  for (std::string f; std::getline(header, f, ',');) names.push_back(f);
  std::vector<nlohmann::json> values(names.size(), nlohmann::json::array());
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::vector<std::string> f;
    for (std::string x; std::getline(row, x, ',');) f.push_back(x);
    for (size_t c = 1; c < f.size() && c < names.size(); ++c) {
      if (!f[c].empty()) values[c].push_back({std::stod(f[0]), f[c]});
    }
  }
  nlohmann::json result = nlohmann::json::array();
  for (size_t c = 1; c < names.size(); ++c) {
    result.push_back(
        {{"metric", {{"__name__", names[c]}, {"instance", "node-a:8000"}, {"job", "vllm"}}}, {"values", values[c]}});
  }
  return nlohmann::json({{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}}).dump();
}

TEST(PolcaCalibrateCommand, VllmMetricsFromAPrometheusRangeQueryCalibrateAsTheCsvDoes) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s = RunWattcut("polca synthesize --config " + kTruthConf + " --trace " + trace + " --duration 1h --out " +
                      dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string json_path = dir.path() + "/vllm.json";
  std::ofstream(json_path) << AsPrometheusRangeQuery(ReadFile(dir.path() + "/data/vllm/node-a.csv"));
  const std::string power = " --power " + dir.path() + "/data/nvidia-smi/node-a.csv";
  auto from_csv = RunWattcut("polca calibrate" + power + " --load " + dir.path() + "/data/vllm/node-a.csv --out " +
                             dir.path() + "/csv");
  ASSERT_EQ(from_csv.exit_code, 0) << from_csv.err;
  auto from_json = RunWattcut("polca calibrate" + power + " --load " + json_path + " --out " + dir.path() + "/json");
  ASSERT_EQ(from_json.exit_code, 0) << from_json.err;
  nlohmann::json a = nlohmann::json::parse(ReadFile(dir.path() + "/csv/calibration.json"));
  nlohmann::json b = nlohmann::json::parse(ReadFile(dir.path() + "/json/calibration.json"));
  EXPECT_EQ(b["load"]["format"], "prometheus");
  EXPECT_EQ(a["parameters"], b["parameters"]);  // the same load, the same fit
  // A label that no series has is named.
  auto bad =
      RunWattcut("polca calibrate" + power + " --load " + json_path + " --load-label pod --out " + dir.path() + "/bad");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no label 'pod'"), std::string::npos) << bad.err;
}

TEST(PolcaCalibrateCommand, ARequestLogStandsInForVllmMetrics) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s =
      RunWattcut("polca synthesize --config " + kTruthConf + " --trace " + trace + " --out " + dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string log = ReadFile(dir.path() + "/data/requests/node-a.csv");
  EXPECT_EQ(log.substr(0, log.find('\n')), "TIMESTAMP,ContextTokens,GeneratedTokens,server");
  auto r = RunWattcut("polca calibrate --power " + dir.path() + "/data/nvidia-smi/node-a.csv --load " + dir.path() +
                      "/data/requests/node-a.csv --hold-back 50% --out " + dir.path() + "/cal");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the load is the request log replayed through the base config's scheduler"), std::string::npos)
      << r.err;
  nlohmann::json c = nlohmann::json::parse(ReadFile(dir.path() + "/cal/calibration.json"));
  EXPECT_EQ(c["load"]["format"], "request-log");
  // Replayed through the model's own scheduler, the log's load is as coarse as 1 s scrapes: 5 %.
  EXPECT_EQ(ExpectNearTruth(c["parameters"], kTruth, 0.05, false), 8);
  // A trace without servers is not a request log.
  std::ofstream(dir.path() + "/t.csv") << "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00,3,4\n";
  auto bad = RunWattcut("polca calibrate --power " + dir.path() + "/data/nvidia-smi/node-a.csv --load " + dir.path() +
                        "/t.csv --out " + dir.path() + "/cal2");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("missing column 'server'"), std::string::npos) << bad.err;
}

TEST(PolcaCalibrateCommand, TheAgentsStreamWithRedfishPowerAlsoFitsTheNonGpuPart) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s =
      RunWattcut("polca synthesize --config " + kTruthConf + " --trace " + trace + " --out " + dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto r = RunWattcut("polca calibrate --power " + dir.path() + "/data/agent/node-a.ndjson --load " + dir.path() +
                      "/data/vllm/node-a.csv --hold-back 50% --out " + dir.path() + "/cal");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("from the GPUs alone"), std::string::npos) << r.err;
  nlohmann::json c = nlohmann::json::parse(ReadFile(dir.path() + "/cal/calibration.json"));
  EXPECT_EQ(c["power"]["format"], "agent");
  // An A100's NVML power is one instant per sample: read as such.
  EXPECT_NE(c["power"]["field"].get<std::string>().find("read as instant samples"), std::string::npos) << c["power"];
  // The A100 defaults the example keeps: 1700 W and 0.15 W per GPU watt.
  const std::map<std::string, double> non_gpu = {{"server.other_idle_w", 1700}, {"server.other_w_per_gpu_w", 0.15}};
  EXPECT_EQ(ExpectNearTruth(c["parameters"], non_gpu, 0.03, true), 2);
  // Instant samples, four a second: each window's reading carries their sampling error.
  EXPECT_EQ(ExpectNearTruth(c["parameters"], kTruth, 0.06, false), 8);
}

TEST(PolcaCalibrateCommand, OneClockSaysTheClockDependenceWasNotMeasured) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s = RunWattcut("polca synthesize --config " + WriteTruth(dir) + " --trace " + trace +
                      " --duration 1h --clocks 1410 --out " + dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto r = RunWattcut("polca calibrate --power " + dir.path() + "/data/nvidia-smi/node-a.csv --load " + dir.path() +
                      "/data/vllm/node-a.csv --out " + dir.path() + "/cal");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gpu.prompt_power_freq_exponent = 1.2  (not measured: the data holds one SM clock"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("lock the GPUs to two or more SM clocks"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("taken as UTC"), std::string::npos) << r.err;
}

// Four recordings whose message named the wrong cause (issue 53): every clocks.sm at 0 MHz and a
// vLLM counter at 1e300 ended in "the fitted model is not a consistent config", a byte order mark
// before nvidia-smi's header in "no timestamp field", and a power file of two rows in "do not
// overlap in time"; a GPU joining the recording midway was calibrated as a ninth GPU of the server.
// Each is now named for what it is, and a BOM is read past.
TEST(PolcaCalibrateCommand, ARecordingsFaultIsNamedForWhatItIs) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s = RunWattcut("polca synthesize --config " + kTruthConf + " --trace " + trace + " --duration 1h --out " +
                      dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string smi = ReadFile(dir.path() + "/data/nvidia-smi/node-a.csv");
  const std::string vllm = ReadFile(dir.path() + "/data/vllm/node-a.csv");
  const std::string vllm_path = dir.path() + "/data/vllm/node-a.csv";

  std::string clocks0;  // every "1410 MHz" (any clock) as "0 MHz"
  for (size_t at = 0, end; at < smi.size(); at = end + 1) {
    end = smi.find('\n', at);
    if (end == std::string::npos) end = smi.size();
    std::string line = smi.substr(at, end - at);
    const size_t clock = line.rfind(", ");
    if (at > 0 && clock != std::string::npos) line = line.substr(0, clock) + ", 0 MHz";
    clocks0 += line + "\n";
  }
  std::ofstream(dir.path() + "/clocks0.csv") << clocks0;
  std::ofstream(dir.path() + "/bom.csv") << "\xEF\xBB\xBF" << smi;
  std::ofstream(dir.path() + "/two-rows.csv") << smi.substr(0, smi.find('\n', smi.find('\n', smi.find('\n') + 1) + 1));
  std::string joined;  // GPU 8 from the recording's middle: GPU 7's rows copied under index 8
  {
    size_t lines = 0, at = 0;
    for (size_t end; at < smi.size(); at = end + 1, ++lines) end = smi.find('\n', at);
    size_t line = 0;
    for (size_t at2 = 0, end; at2 < smi.size(); at2 = end + 1, ++line) {
      end = smi.find('\n', at2);
      if (end == std::string::npos) end = smi.size();
      const std::string row = smi.substr(at2, end - at2);
      joined += row + "\n";
      if (line > lines / 2 && row.find(", 7, ") != std::string::npos) {
        std::string copy = row;
        copy.replace(copy.find(", 7, "), 5, ", 8, ");
        joined += copy + "\n";
      }
    }
  }
  std::ofstream(dir.path() + "/joined.csv") << joined;
  std::string counter = vllm;  // the 100th row's prompt-token counter at 1e300
  size_t row = 0;
  for (int line = 0; line < 100; ++line) row = counter.find('\n', row) + 1;
  const size_t third = counter.find(',', counter.find(',', counter.find(',', row) + 1) + 1) + 1;
  counter.replace(third, counter.find(',', third) - third, "1e300");
  std::ofstream(dir.path() + "/counter.csv") << counter;

  struct Case {
    std::string power, load, expect;
  } cases[] = {
      {"clocks0.csv", vllm_path, "has an SM clock of 0 MHz in every one of its"},
      {"two-rows.csv", vllm_path, "has too few readings to cover one load window (power: 1 reading a GPU"},
      // Before: calibrated, and wrote server.gpus = 9.
      {"joined.csv", vllm_path, "GPU 8's readings begin 1800 s after the other GPUs' (a GPU joined or left"},
      {"data/nvidia-smi/node-a.csv", dir.path() + "/counter.csv",
       "counter.csv:101: column 'vllm:prompt_tokens_total': expected vllm:prompt_tokens_total at most 1e+15"},
  };
  for (const Case& c : cases) {
    auto r = RunWattcut("polca calibrate --power " + dir.path() + "/" + c.power + " --load " + c.load + " --out " +
                        dir.path() + "/cal");
    EXPECT_EQ(r.exit_code, 1) << c.power;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.power << "\n" << r.err;
    EXPECT_EQ(r.err.find("not a consistent config"), std::string::npos) << r.err;
  }
  auto bom = RunWattcut("polca calibrate --power " + dir.path() + "/bom.csv --load " + vllm_path + " --out " +
                        dir.path() + "/bom-cal");
  EXPECT_EQ(bom.exit_code, 0) << bom.err;
}

// Issue 52: the load as real recorders write it (a `timestamp` column, vLLM's names without their
// prefix, CRLF line ends, metrics the fit does not use, no first-token or success counter) is read
// as it is; several runs fit together; a wrong UTC offset is named with the one that lines up.
TEST(PolcaCalibrateCommand, ARecordersOwnFilesCalibrateAlongAndTogether) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  auto s = RunWattcut("polca synthesize --config " + kTruthConf + " --trace " + trace +
                      " --duration 20m --clocks 1410 --utc-offset +02:00 --out " + dir.path() + "/data");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::istringstream vllm(ReadFile(dir.path() + "/data/vllm/node-a.csv"));
  std::string line, engine;
  std::vector<int> keep;
  for (int row = 0; std::getline(vllm, line); ++row) {
    std::vector<std::string> fields;
    for (size_t at = 0;;) {
      const size_t comma = line.find(',', at);
      fields.push_back(line.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (row == 0) {
      for (size_t c = 0; c < fields.size(); ++c) {
        if (fields[c].find("time_to_first_token") == std::string::npos &&
            fields[c].find("request_success") == std::string::npos) {
          keep.push_back(static_cast<int>(c));
        }
      }
    }
    std::string out;
    for (int c : keep) {
      std::string f = fields[static_cast<size_t>(c)];
      if (row == 0 && f == "time") f = "timestamp";
      if (row == 0 && f.rfind("vllm:", 0) == 0) f = f.substr(5);
      out += (out.empty() ? "" : ",") + f;
    }
    engine += out + (row == 0 ? ",gpu_cache_usage_perc" : ",0.25") + "\r\n";
  }
  const std::string engine_path = dir.path() + "/engine.csv", smi = dir.path() + "/data/nvidia-smi/node-a.csv";
  std::ofstream(engine_path) << engine;
  ASSERT_EQ(engine.substr(0, 30), "timestamp,num_requests_running");

  auto one = RunWattcut("polca calibrate --power " + smi + " --load " + engine_path + " --utc-offset +02:00 --out " +
                        dir.path() + "/one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.err.find("columns not used: gpu_cache_usage_perc"), std::string::npos) << one.err;
  EXPECT_NE(one.out.find("held back"), std::string::npos) << one.out;
  const nlohmann::json c = nlohmann::json::parse(ReadFile(dir.path() + "/one/calibration.json"));
  EXPECT_LT(c["held_back"]["one_second"]["mean_abs_tdp"].get<double>(), 0.04) << c["held_back"];
  EXPECT_LT(std::abs(c["held_back"]["energy_error"].get<double>()), 0.03) << c["held_back"];

  auto both = RunWattcut("polca calibrate --power " + smi + " --load " + engine_path + " --power " + smi + " --load " +
                         dir.path() + "/data/vllm/node-a.csv --utc-offset +02:00 --out " + dir.path() + "/both");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("(8 GPUs, 2 runs)"), std::string::npos) << both.out;
  EXPECT_NE(both.err.find("run 2: "), std::string::npos) << both.err;

  auto unpaired = RunWattcut("polca calibrate --power " + smi + " --load " + engine_path + " --power " + smi +
                             " --utc-offset +02:00 --out " + dir.path() + "/unpaired");
  EXPECT_EQ(unpaired.exit_code, 1);
  EXPECT_NE(unpaired.err.find("--power was given 2 times and --load 1"), std::string::npos) << unpaired.err;

  // Read as UTC, nvidia-smi's local times are 2 h late: nothing overlaps, and the refusal says why.
  auto utc = RunWattcut("polca calibrate --power " + smi + " --load " + engine_path + " --out " + dir.path() + "/utc");
  EXPECT_EQ(utc.exit_code, 1);
  EXPECT_NE(utc.err.find("do not overlap in time (power:"), std::string::npos) << utc.err;
  EXPECT_NE(utc.err.find("did you mean --utc-offset +02:00?"), std::string::npos) << utc.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/utc/calibrated.conf"));
}

TEST(PolcaCalibrateCommand, BadFilesAreRefusedByNameAndNothingIsWritten) {
  TempDir dir;
  const std::string smi = dir.path() + "/n.nvidia-smi.csv", vllm = dir.path() + "/n.vllm.csv";
  std::ofstream(smi) << "timestamp, index, power.draw [W], clocks.sm [MHz]\n"
                        "2024/05/10 00:00:00.000, 0, 85.59 W, 1410 MHz\n"
                        "2024/05/10 00:00:00.250, 0, 85 Watts, 1410 MHz\n";
  std::ofstream(vllm) << "time,vllm:num_requests_running,vllm:prompt_tokens_total,vllm:generation_tokens_total\n"
                         "1715299200,0,0,0\n1715299201,0,0,0\n";
  const std::string good = dir.path() + "/good.csv";
  std::ofstream(good) << "timestamp, index, power.draw [W]\n2024/05/10 00:00:00.000, 0, 85.59 W\n";
  struct Case {
    std::string args, expect;
  } cases[] = {
      {"--power " + vllm + " --load " + vllm, "n.vllm.csv: not a power telemetry format read here"},
      {"--power " + smi + " --load " + vllm,
       "n.nvidia-smi.csv:3: column 'power.draw': expected a GPU's power in watts"},
      {"--power " + good + " --load " + smi,
       "n.nvidia-smi.csv: this is nvidia-smi power (header 'timestamp, index, power.draw [W]"},
      {"--power " + smi + " --load " + vllm + " --utc-offset 2",
       "--utc-offset: time zone '2' is not in the TZ database"},
      {"--power " + smi + " --load " + vllm + " --hold-back 95%", "--hold-back"},
      {"--power " + dir.path() + "/missing.csv --load " + vllm, "missing.csv"},
  };
  for (const Case& c : cases) {
    auto r = RunWattcut("polca calibrate " + c.args + " --out " + dir.path() + "/cal");
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir.path() + "/cal/calibrated.conf")) << c.args;
  }
}

}  // namespace
}  // namespace wattcut
