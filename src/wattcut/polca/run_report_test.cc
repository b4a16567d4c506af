#include "wattcut/polca/run_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::polca {
namespace {

namespace fs = std::filesystem;

RequestTrace Synthetic() {
  std::vector<TraceRequest> r;
  for (int i = 0; i < 7200; ++i) r.push_back({i * 0.5, 200 + (i * 37) % 1500, 20 + (i * 13) % 200});
  return *RequestTrace::FromRequests(r, "synthetic");
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RunReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wattcut_polca_report_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    config_ = *BuiltInConfig("a100");
    config_.row.baseline_servers = 6;
    config_.row.provisioned_w_per_server = 4800;  // tight: the policy has work to do
    config_.workload.diurnal_trough = 1.0;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  PolcaConfig config_;
  RequestTrace trace_ = Synthetic();
};

TEST_F(RunReportTest, WritesSummaryTablesAndWellFormedPictures) {
  RowRunOptions o;
  o.servers = 7;
  o.duration_s = 3 * 3600;
  auto run = SimulateRow(config_, trace_, o);
  o.policy = PolicyKind::kNone;
  auto reference = SimulateRow(config_, trace_, o);
  ASSERT_TRUE(run.ok() && reference.ok());
  RunContext context{"wattcut polca simulate ...", &config_, &trace_, 1, 2.0};
  Status st = WriteRunReport(dir_.string(), context, *run, *reference);
  ASSERT_TRUE(st.ok()) << st.error().message;

  auto summary = nlohmann::json::parse(Slurp(dir_ / "summary.json"));
  EXPECT_EQ(summary["run"]["policy"], "polca");
  EXPECT_EQ(summary["run"]["servers"], 7);
  EXPECT_EQ(summary["unconstrained"]["policy"], "none");
  EXPECT_EQ(summary["run"]["brake_events"], run->brake_events);
  EXPECT_TRUE(summary["run"]["high_priority"].contains("p99_latency_impact"));
  EXPECT_TRUE(summary["run"]["time_in_state_s"].contains("t2-high"));
  EXPECT_NEAR(summary["added_fraction"].get<double>(), 7.0 / 6 - 1, 1e-12);
  EXPECT_DOUBLE_EQ(summary["simulated_s_per_wall_s"].get<double>(), 2 * 3 * 3600 / 2.0);

  std::string csv = Slurp(dir_ / "run.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2);
  EXPECT_EQ(csv.rfind("policy,servers,", 0), 0u);
  std::string power = Slurp(dir_ / "row_power.csv");
  EXPECT_EQ(std::count(power.begin(), power.end(), '\n'), 1 + 180);  // one line per minute
  auto config_back = ParseConfig(Slurp(dir_ / "config.conf"), "config.conf");
  ASSERT_TRUE(config_back.ok()) << config_back.error().message;
  EXPECT_DOUBLE_EQ(config_back->row.provisioned_w_per_server, 4800);
  for (const char* svg : {"row_power.svg", "power_cdf.svg"}) {
    std::string text = Slurp(dir_ / svg);
    EXPECT_EQ(plot::testing::XmlProblem(text), "") << svg;
    EXPECT_NE(text.find("T2 89 %"), std::string::npos) << svg;
  }
}

TEST_F(RunReportTest, WritesSweepFilesAndMarkdown) {
  SweepOptions options;
  options.added_fractions = {0.0, 0.5};
  options.policies = {PolicyKind::kPolca, PolicyKind::kUniformCap};
  options.duration_s = 3600;
  auto sweep = RunSweep(config_, trace_, options);
  ASSERT_TRUE(sweep.ok());
  RunContext context{"wattcut polca sweep ...", &config_, &trace_, 1, 1.0};
  Status st = WriteSweepReport(dir_.string(), context, *sweep);
  ASSERT_TRUE(st.ok()) << st.error().message;
  auto summary = nlohmann::json::parse(Slurp(dir_ / "summary.json"));
  EXPECT_EQ(summary["points"].size(), 4u);
  EXPECT_TRUE(summary["max_added_fraction_held"].contains("uniform-cap"));
  std::string md = Slurp(dir_ / "sweep.md");
  EXPECT_EQ(md, SweepMarkdown(*sweep));
  EXPECT_EQ(std::count(md.begin(), md.end(), '\n'), 2 + 4);
  EXPECT_NE(md.find("| +50 % | 9 | uniform-cap |"), std::string::npos);
  for (const char* svg : {"sweep_brakes.svg", "sweep_latency_high.svg", "sweep_latency_low.svg"}) {
    std::string text = Slurp(dir_ / svg);
    EXPECT_EQ(plot::testing::XmlProblem(text), "") << svg;
    EXPECT_NE(text.find(">polca"), std::string::npos) << svg;
  }
}

TEST_F(RunReportTest, ReportsAnUnwritableFolder) {
  RunContext context{"x", &config_, &trace_, 1, 1.0};
  SweepResult empty;
  Status st = WriteSweepReport("/proc/wattcut-cannot-write-here", context, empty);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("/proc/wattcut-cannot-write-here"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::polca
