// `wattcut polca` as an operator runs it: the real binary on the Azure trace.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/cli/command_runner.h"
#include "wattcut/base/shared_data_testing.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

TEST(PolcaCommand, SimulateWritesSummaryAndPictures) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  std::string out = dir.path() + "/run";
  auto result = RunWattcut("polca simulate --trace " + trace + " --servers 40 --added 30% --duration 2h --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("52 servers (40 + 30 %)"), std::string::npos) << result.out;
  nlohmann::json summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_TRUE(summary.is_object());
  for (const char* file : {"run.csv", "row_power.csv", "row_power.svg", "power_cdf.svg", "config.conf"}) {
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  }
  EXPECT_NE(ReadFile(out + "/row_power.svg").find("</svg>"), std::string::npos);
}

TEST(PolcaCommand, TheLoadIsPrintedInBothTermsAndCanBeStatedByWork) {
  WATTCUT_REQUIRE_SHARED_FILE(conv, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  WATTCUT_REQUIRE_SHARED_FILE(code, "azure-llm-inference-2023/AzureLLMInferenceTrace_code.csv");
  TempDir dir;
  // Stated by rate (every config so far): the rate stays, and its utilization is printed.
  auto by_rate = RunWattcut("polca simulate --trace " + conv + " --duration 1h --out " + dir.path() + "/rate");
  ASSERT_EQ(by_rate.exit_code, 0) << by_rate.err;
  EXPECT_NE(by_rate.out.find("load at the peak: 0.7 requests/s per serving server, 53.1 % of a server's capacity"),
            std::string::npos)
      << by_rate.out;
  nlohmann::json load = nlohmann::json::parse(ReadFile(dir.path() + "/rate/summary.json"))["load"];
  EXPECT_EQ(load["stated_by"], "workload.peak_requests_per_server_s");
  EXPECT_EQ(load["peak_requests_per_server_s"], 0.7);
  // Stated by work: the code trace's requests bring less work each (longer prompts, but answers of a
  // few tokens), so the same 53.1 % is more of them a second.
  const std::string config = dir.path() + "/by-work.conf";
  std::ofstream(config) << "workload.peak_utilization = 0.531\n";
  auto by_work = RunWattcut("polca simulate --config " + config + " --trace " + code + " --duration 1h --out " +
                            dir.path() + "/work");
  ASSERT_EQ(by_work.exit_code, 0) << by_work.err;
  EXPECT_NE(by_work.out.find("53.1 % of a server's capacity"), std::string::npos) << by_work.out;
  EXPECT_NE(by_work.out.find("from workload.peak_utilization"), std::string::npos) << by_work.out;
  load = nlohmann::json::parse(ReadFile(dir.path() + "/work/summary.json"))["load"];
  EXPECT_EQ(load["stated_by"], "workload.peak_utilization");
  EXPECT_NEAR(load["peak_utilization"].get<double>(), 0.531, 1e-12);
  EXPECT_NEAR(load["peak_requests_per_server_s"].get<double>(), 0.531 / load["mean_request_work_s"].get<double>(),
              1e-12);
  EXPECT_GT(load["peak_requests_per_server_s"].get<double>(), 0.7);
}

// Requests no server can finish (10^7 prompt tokens each): the unconstrained row leaves nearly all
// of them unfinished, so no latency compares. Before, the run said "latency impact +0.00 %, SLOs
// met" with 0 requests completed; now it says it cannot judge them, and a sweep holds nothing.
TEST(PolcaCommand, ARowThatCannotServeItsRequestsIsNotJudgedMet) {
  TempDir dir;
  const std::string trace = dir.path() + "/heavy.csv";
  {
    std::ofstream f(trace);
    f << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    for (int i = 0; i < 200; ++i) {
      char row[96];
      std::snprintf(row, sizeof(row), "2023-11-16 18:%02d:%02d.000000,10000000,100\n", i / 60, i % 60);
      f << row;
    }
  }
  auto run = RunWattcut("polca simulate --trace " + trace + " --servers 4 --duration 1h --out " + dir.path() + "/run");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("SLOs cannot be judged: the unconstrained row itself leaves"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("SLOs met"), std::string::npos) << run.out;
  nlohmann::json summary = nlohmann::json::parse(ReadFile(dir.path() + "/run/summary.json"));
  EXPECT_EQ(summary["slo_verdict"], "cannot judge");
  EXPECT_FALSE(summary["meets_slos"].get<bool>());
  auto sweep = RunWattcut("polca sweep --trace " + trace + " --servers 4 --added 0%,10% --policy polca,brake-only " +
                          "--duration 1h --out " + dir.path() + "/sweep");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("polca holds no point of the sweep"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("brake-only holds no point of the sweep"), std::string::npos) << sweep.out;
}

// A control latency beyond any control loop is refused with its range. Before, telemetry_delay_s =
// 1e9 let a sweep say "headroom holds up to +60 %" while the row peaked at 123 % of its budget.
TEST(PolcaCommand, ALatencyBeyondAnyControlLoopIsRefusedWithItsRange) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  for (const char* key : {"control.telemetry_delay_s = 1e9", "control.actuation_latency_s = 1e9",
                          "control.brake_latency_s = 1e12", "control.brake_latency_s = -1"}) {
    const std::string config = dir.path() + "/latency.conf";
    std::ofstream(config) << key << "\n";
    auto r = RunWattcut("polca simulate --config " + config + " --trace " + trace + " --duration 1h --out " +
                        dir.path() + "/out");
    EXPECT_EQ(r.exit_code, 1) << key;
    EXPECT_NE(r.err.find("must be between 0 s and 600 s, got"), std::string::npos) << key << ": " << r.err;
  }
}

TEST(PolcaCommand, SweepComparesPolicies) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  std::string out = dir.path() + "/sweep";
  auto result = RunWattcut("polca sweep --trace " + trace +
                           " --added 0:30:30 --policy polca,brake-only --duration 1h --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("| +30 % | 52 | polca |"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("| +30 % | 52 | brake-only |"), std::string::npos) << result.out;
  for (const char* file : {"sweep.csv", "sweep.md", "sweep_brakes.svg", "sweep_latency_low.svg", "summary.json"}) {
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  }
}

TEST(PolcaCommand, TimeOfDayTraceRunsOnTheTracesTimelineAndRecordsIt) {
  TempDir dir;
  // Three hours in the 2024 form, busier in the second hour.
  std::string trace = dir.path() + "/2024.csv";
  {
    std::ofstream out(trace);
    out << "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    for (int h = 0; h < 3; ++h) {
      const int n = h == 1 ? 600 : 200;
      for (int i = 0; i < n; ++i) {
        const long long us = static_cast<long long>(3600.0 * 1e6 * i / n);
        char line[96];
        std::snprintf(line, sizeof(line), "2024-05-10 %02d:%02lld:%02lld.%06lld+00:00,%d,%d\n", h, us / 60'000'000,
                      us / 1'000'000 % 60, us % 1'000'000, 100 + i % 900, 10 + i % 200);
        out << line;
      }
    }
    out << "2024-05-10 03:00:00.000000+00:00,100,10\n";
  }
  const std::string out = dir.path() + "/run";
  auto run = RunWattcut("polca simulate --trace " + trace + " --servers 8 --time-of-day trace --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json summary = nlohmann::json::parse(ReadFile(out + "/summary.json"));
  EXPECT_EQ(summary["time_of_day"], "trace");
  EXPECT_EQ(summary["duration_s"], 3 * 3600 + 1);  // the trace's span, rounded up
  EXPECT_EQ(summary["trace"]["busiest_hour"], 1);
  EXPECT_EQ(summary["trace"]["start"], "2024-05-10 00:00:00.000000+00:00");
  // The busiest hour at 0.7 requests/s for each of the 8 servers: 20,160 requests in 3 h at
  // 1/3, 1 and 1/3 of that rate.
  EXPECT_NEAR(summary["run"]["arrivals"].get<double>(), 8 * 0.7 * 3600 * (5.0 / 3), 400);
  EXPECT_NE(summary["command"].get<std::string>().find("--time-of-day trace"), std::string::npos);

  auto cosine = RunWattcut("polca simulate --trace " + trace + " --duration 1h --out " + dir.path() + "/cosine");
  ASSERT_EQ(cosine.exit_code, 0) << cosine.err;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(dir.path() + "/cosine/summary.json"))["time_of_day"], "cosine");

  auto longer = RunWattcut("polca simulate --trace " + trace + " --time-of-day trace --duration 4h --out " +
                           dir.path() + "/longer");
  EXPECT_EQ(longer.exit_code, 1);
  EXPECT_NE(longer.err.find("is longer than the trace " + trace), std::string::npos) << longer.err;
  auto sweep = RunWattcut("polca sweep --trace " + trace +
                          " --servers 8 --added 0,25 --policy polca --time-of-day trace --duration 2h --out " +
                          dir.path() + "/sweep");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  auto bad = RunWattcut("polca simulate --trace " + trace + " --time-of-day sunny --out " + dir.path() + "/bad");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--time-of-day: expected cosine"), std::string::npos) << bad.err;
}

TEST(PolcaCommand, BadTraceAndImpossibleThresholdsAreRefused) {
  TempDir dir;
  std::string trace = dir.path() + "/bad.csv";
  std::ofstream(trace) << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                          "2023-11-16 18:15:46.6805900,374,44\n"
                          "2023-11-16 18:15:50.0000000,-3,10\n";
  auto bad = RunWattcut("polca simulate --trace " + trace + " --duration 1h --out " + dir.path() + "/o");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "wattcut polca simulate: error: " + trace +
                         ":3: column 'ContextTokens': expected a positive token count, got -3\n");
  EXPECT_FALSE(fs::exists(dir.path() + "/o"));

  auto config = RunWattcut("polca config --gpu a100");
  ASSERT_EQ(config.exit_code, 0) << config.err;
  std::string text = config.out;
  size_t pos = text.find("policy.t1 = 0.8\n");
  ASSERT_NE(pos, std::string::npos) << text;
  text.replace(pos, std::string("policy.t1 = 0.8\n").size(), "policy.t1 = 0.95\n");
  std::string conf = dir.path() + "/row.conf";
  std::ofstream(conf) << text;
  std::string good = dir.path() + "/good.csv";
  std::ofstream(good) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n";
  auto thresholds =
      RunWattcut("polca simulate --trace " + good + " --config " + conf + " --duration 1h --out " + dir.path() + "/o2");
  EXPECT_EQ(thresholds.exit_code, 1);
  EXPECT_NE(thresholds.err.find("t1"), std::string::npos) << thresholds.err;
  EXPECT_NE(thresholds.err.find(conf), std::string::npos) << thresholds.err;
}

// A small valid trace and an output path in `dir`.
struct PolcaInputs {
  std::string trace;
  std::string out;
};
PolcaInputs SmallInputs(const TempDir& dir) {
  PolcaInputs in{dir.path() + "/t.csv", dir.path() + "/o"};
  std::ofstream(in.trace) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
                             "2023-11-16 18:15:50.0000000,396,109\n";
  return in;
}

// Each (command, part of its error message): exit status 1, the message, and no `out` written.
void ExpectRefusedBeforeAnyOutput(const std::vector<std::pair<std::string, std::string>>& cases,
                                  const std::string& out) {
  for (const auto& [command, message] : cases) {
    auto result = RunWattcut(command);
    EXPECT_EQ(result.exit_code, 1) << command << "\n" << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << command << "\n" << result.err;
    EXPECT_FALSE(fs::exists(out)) << command;
  }
}

// Each of these aborted (bad_alloc, system_error), ran on defaults or meant seconds before.
TEST(PolcaCommand, ArgumentsOutsideTheRowLimitsAreRefusedBeforeAnyWork) {
  TempDir dir;
  PolcaInputs in = SmallInputs(dir);
  const std::string simulate = "polca simulate --trace " + in.trace + " --out " + in.out + " ";
  const std::string sweep = "polca sweep --trace " + in.trace + " --out " + in.out + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {simulate + "--servers 0", "--servers must be between 1 and 10000 servers"},
      {simulate + "--servers -3", "--servers must be between 1 and 10000 servers"},
      {simulate + "--servers 2000000000", "--servers must be between 1 and 10000 servers"},
      {simulate + "--added 1e9%", "--added: at most 1000 % (ten times the baseline row), got '1e9%'"},
      {simulate + "--servers 8000 --added 50%", "the row must be between 1 and 10000 servers"},
      {simulate + "--duration 7",
       "--duration: expected a number with a unit, d (days), h (hours), m (minutes) or s (seconds), like 7d, 12h, "
       "30m or 45s, got '7'"},
      {simulate + "--duration 1e12d", "--duration: the duration must be between 1 s and 90 d"},
      {simulate + "--duration 0s", "--duration: the duration must be between 1 s and 90 d"},
      {simulate + "--duration 7x", "--duration: expected a number with a unit"},
      {simulate + "--servers 2000 --duration 90d", "more than the 200000000 one run may simulate"},
      {sweep + "--added 0:1000:0.000001", "--added: '0:1000:0.000001' is 1000000001 values, more than the 1000"},
      {sweep + "--added 0:10:10 --jobs 100000", "--jobs must be between 1 and 256 (0: one per CPU), got 100000"},
      {sweep + "--added 0:50:5 --servers 8000", "the row must be between 1 and 10000 servers"},
  };
  ExpectRefusedBeforeAnyOutput(cases, in.out);
}

TEST(PolcaCommand, ConfigThatIsADirectoryOrSetsAKeyTwiceOrIsOutOfBoundsIsRefused) {
  TempDir dir;
  PolcaInputs in = SmallInputs(dir);
  const std::string simulate = "polca simulate --trace " + in.trace + " --duration 1h --out " + in.out + " --config ";
  auto directory = RunWattcut(simulate + dir.path());
  EXPECT_EQ(directory.exit_code, 1);
  EXPECT_EQ(directory.err,
            "wattcut polca simulate: error: " + dir.path() + ": is a directory, expected a config file\n");

  const std::string twice = dir.path() + "/twice.conf";
  std::ofstream(twice) << "base = a100\npolicy.t1 = 0.8\n\n# later\npolicy.t1 = 0.7\n";
  auto duplicate = RunWattcut(simulate + twice);
  EXPECT_EQ(duplicate.exit_code, 1);
  EXPECT_EQ(duplicate.err,
            "wattcut polca simulate: error: " + twice + ":5: key 'policy.t1': set twice, on line 2 and on line 5\n");

  const std::vector<std::pair<std::string, std::string>> bounds = {
      {"control.telemetry_period_s = 1e-9", "control.telemetry_period_s must be between 0.01 s and 3600 s"},
      {"workload.peak_requests_per_server_s = 1e9", "workload.peak_requests_per_server_s must be positive and at most"},
      {"service.max_batch = 1000000000", "service.max_batch must be between 1 and 4096"},
      {"row.baseline_servers = 100000", "row.baseline_servers must be between 1 and 10000 servers"},
  };
  for (const auto& [line, message] : bounds) {
    const std::string conf = dir.path() + "/bound.conf";
    std::ofstream(conf) << line << "\n";
    auto result = RunWattcut(simulate + conf);
    EXPECT_EQ(result.exit_code, 1) << line;
    EXPECT_NE(result.err.find(message), std::string::npos) << line << "\n" << result.err;
  }
  EXPECT_FALSE(fs::exists(in.out));
}

TEST(PolcaCommand, TraceMessagesNeverEchoControlBytesAndABomIsNotAColumn) {
  TempDir dir;
  const std::string trace = dir.path() + "/esc.csv";
  std::ofstream(trace) << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,374,44\n"
                          "\x1b[2J\x1b]0;owned\x07,5,5\n";
  auto result = RunWattcut("polca simulate --trace " + trace + " --duration 1h --out " + dir.path() + "/o");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err.find('\x1b'), std::string::npos);
  EXPECT_NE(result.err.find(":3: column 'TIMESTAMP': expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got "
                            "'\\x1b[2J\\x1b]0;owned\\x07'"),
            std::string::npos)
      << result.err;

  const std::string bom = dir.path() + "/bom.csv";
  std::ofstream(bom) << "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,374,44\n";
  auto with_bom = RunWattcut("polca simulate --trace " + bom + " --duration 10m --out " + dir.path() + "/b");
  EXPECT_EQ(with_bom.exit_code, 0) << with_bom.err;
}

// A row that trains: a quarter of its servers run GPT-3 on the A100 profile (docs/polca.md,
// "Training servers"), simulated under each training control and swept with both.
TEST(PolcaCommand, ARowWithTrainingServersReportsTheTrainingThroughput) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  const std::string training = " --training-share 25% --training-profile " + profile;
  auto run =
      RunWattcut("polca simulate --trace " + trace + " --added 20% --duration 1h --training-control power-target" +
                 training + " --out " + dir.path() + "/run");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("training (power-target): 12 servers, throughput"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("target 350 W per GPU: plan "), std::string::npos) << run.out;
  nlohmann::json summary = nlohmann::json::parse(ReadFile(dir.path() + "/run/summary.json"));
  EXPECT_EQ(summary["run"]["training_control"], "power-target");
  EXPECT_EQ(summary["run"]["training"]["servers"], 12);
  EXPECT_TRUE(summary["run"]["training"]["throughput_change"].is_number());
  EXPECT_EQ(summary["training_job"]["targets"].size(), 2u);
  EXPECT_NE(ReadFile(dir.path() + "/run/run.csv").find(",training_control,training_servers,"), std::string::npos);
  // config.conf gives the same run back.
  auto again = RunWattcut("polca simulate --trace " + trace +
                          " --added 20% --duration 1h --training-control power-target --config " + dir.path() +
                          "/run/config.conf --out " + dir.path() + "/again");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(dir.path() + "/run/run.csv"), ReadFile(dir.path() + "/again/run.csv"));

  auto sweep = RunWattcut("polca sweep --trace " + trace + " --added 0:20:20 --policy polca --duration 1h" + training +
                          " --out " + dir.path() + "/sweep");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("| +20 % | 48 | polca+locks |"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("| +20 % | 48 | polca+power-target |"), std::string::npos) << sweep.out;
  EXPECT_NE(sweep.out.find("polca+power-target holds"), std::string::npos) << sweep.out;
  nlohmann::json swept = nlohmann::json::parse(ReadFile(dir.path() + "/sweep/summary.json"));
  EXPECT_TRUE(swept["max_added_fraction_held"].contains("polca+locks"));
  EXPECT_EQ(swept["points"].size(), 4u);
  EXPECT_NE(ReadFile(dir.path() + "/sweep/sweep_training.svg").find("polca+power-target"), std::string::npos);
}

TEST(PolcaCommand, AProfileWhoseClocksAreNotTheGpusIsRunWithAWarning) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  WATTCUT_REQUIRE_SHARED_FILE(profile, "perseus-sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv");
  TempDir dir;
  auto run = RunWattcut("polca simulate --gpu h100 --trace " + trace + " --duration 10m --training-share 25% " +
                        "--training-profile " + profile + " --out " + dir.path() + "/o");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Said before the run, naming the profile (made absolute).
  EXPECT_EQ(run.err.rfind("wattcut polca simulate: warning: training.profile /", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("gpt3-175b+a100_sxm_bf16.csv: the profile's clocks (855 to 1410 MHz) are not the GPU's "
                         "(gpu.max_freq_mhz 1980, policy.t2_low_mhz 1530)"),
            std::string::npos)
      << run.err;
}

// training_share 0, the default, gives the outputs of a row without any training settings.
TEST(PolcaCommand, ARowWithoutTrainingGivesTheSameOutputs) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  const std::string conf = dir.path() + "/zero.conf";
  std::ofstream(conf) << "row.training_share = 0\ntraining.profile = none.csv\ntraining.microbatches = 12\n";
  const std::string common = "polca simulate --trace " + trace + " --added 30% --duration 1h --out ";
  auto plain = RunWattcut(common + dir.path() + "/plain");
  auto zero = RunWattcut(common + dir.path() + "/zero --config " + conf);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  for (const char* file : {"run.csv", "row_power.csv", "row_power.svg", "power_cdf.svg"}) {
    EXPECT_EQ(ReadFile(dir.path() + "/plain/" + file), ReadFile(dir.path() + "/zero/" + file)) << file;
  }
  nlohmann::json summary = nlohmann::json::parse(ReadFile(dir.path() + "/plain/summary.json"));
  EXPECT_FALSE(summary.contains("training_job"));
  EXPECT_FALSE(summary["run"].contains("training"));
}

TEST(PolcaCommand, TrainingSettingsThatCannotWorkAreRefused) {
  TempDir dir;
  PolcaInputs in = SmallInputs(dir);
  const std::string simulate = "polca simulate --trace " + in.trace + " --duration 1h --out " + in.out + " ";
  const std::string conf = dir.path() + "/stages.conf";
  std::ofstream(conf) << "row.training_share = 0.25\ntraining.stages = 3\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {simulate + "--training-control power-target",
       "--training-control: the row has no training servers (set --training-share or row.training_share)"},
      {simulate + "--training-share 100%",
       "--training-share: expected a percentage of the row's servers from 0 % to below 100 %, like 25%, got '100%'"},
      {simulate + "--training-share 25%",
       "row.training_share = 0.25 needs the training job's stage profile: set training.profile (or "
       "--training-profile)"},
      {simulate + "--training-share 25% --training-profile " + dir.path() + "/missing.csv",
       "training.profile " + dir.path() + "/missing.csv: "},
      {simulate + "--training-share 25% --training-profile p.csv --training-control caps",
       "--training-control: unknown training control 'caps' (expected locks or power-target)"},
      {simulate + "--training-share 25% --training-profile p.csv --training-control locks,power-target",
       "--training-control: simulate runs one (locks or power-target); sweep runs both"},
      {simulate + "--config " + conf, conf + ": training.stages must divide server.gpus"},
  };
  ExpectRefusedBeforeAnyOutput(cases, in.out);
}

}  // namespace
}  // namespace wattcut
