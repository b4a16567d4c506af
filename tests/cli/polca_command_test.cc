// `wattcut polca` as an operator runs it: the real binary on the Azure trace.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

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

TEST(PolcaCommand, SweepComparesPolicies) {
  WATTCUT_REQUIRE_SHARED_FILE(trace, "azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
  TempDir dir;
  std::string out = dir.path() + "/sweep";
  auto result = RunWattcut("polca sweep --trace " + trace + " --added 0:30:30 --policy polca,brake-only --duration 1h --out " +
                           out);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("| +30 % | 52 | polca |"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("| +30 % | 52 | brake-only |"), std::string::npos) << result.out;
  for (const char* file : {"sweep.csv", "sweep.md", "sweep_brakes.svg", "sweep_latency_low.svg", "summary.json"}) {
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  }
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
  auto thresholds = RunWattcut("polca simulate --trace " + good + " --config " + conf + " --duration 1h --out " +
                               dir.path() + "/o2");
  EXPECT_EQ(thresholds.exit_code, 1);
  EXPECT_NE(thresholds.err.find("t1"), std::string::npos) << thresholds.err;
  EXPECT_NE(thresholds.err.find(conf), std::string::npos) << thresholds.err;
}

}  // namespace
}  // namespace wattcut
