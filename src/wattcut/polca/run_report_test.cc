#include "wattcut/polca/run_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <unistd.h>

#include "wattcut/base/csv_reader.h"
#include "wattcut/plot/xml_check_testing.h"
#include "wattcut/polca/synthetic_trace_testing.h"

namespace wattcut::polca {
namespace {

namespace fs = std::filesystem;

using testing::SyntheticHourAtTwoRequestsASecond;

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
  RequestTrace trace_ = SyntheticHourAtTwoRequestsASecond();
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

// A run with values that no fixed number of decimals writes exactly.
RowRunResult ThirdsRun(PolicyKind policy, double latency_s) {
  RowRunResult r;
  r.policy = policy;
  r.servers = 7;
  r.duration_s = 120;
  r.brake_events = 1;
  r.brake_active_s = 1.0 / 3;
  r.level_s = {0.1 + 0.2, 1.0 / 3, 2.0 / 3, 120 - 1.0 / 3};
  r.power_max = 0.1 + 0.2;
  r.power_p99 = 1.0 / 3;
  r.power_mean = 2.0 / 3;
  r.energy_kwh = 10.0 / 3;
  r.high.latency_p50_s = latency_s;
  r.high.latency_p99_s = 2 * latency_s;
  r.high.tokens_per_s = 7 * latency_s;
  r.high.generated_tokens = 7;
  r.low = r.high;
  r.power_samples = {0.1f, 0.2f, 0.4f, 0.7f, 0.8f, 0.9f};  // two minutes of 20 s readings
  return r;
}

// The cells of `text`'s only data row (after the header).
std::vector<double> CsvNumbers(const std::string& text, size_t row = 0) {
  Result<CsvTable> table = CsvTable::Parse(text, "t.csv");
  std::vector<double> out;
  if (!table.ok() || table->rows().size() <= row) return out;
  for (const std::string& field : table->rows()[row].fields) out.push_back(std::strtod(field.c_str(), nullptr));
  return out;
}

TEST_F(RunReportTest, CsvCellsReadBackAsTheComputedDoubles) {
  config_.control.telemetry_period_s = 20;
  const RowRunResult run = ThirdsRun(PolicyKind::kPolca, 1.0);
  const RowRunResult reference = ThirdsRun(PolicyKind::kNone, 3.0);
  RunContext context{"x", &config_, &trace_, 1, 1.0};
  Status st = WriteRunReport(dir_.string(), context, run, reference);
  ASSERT_TRUE(st.ok()) << st.error().message;
  const RunImpact impact = CompareRuns(run, reference);
  std::vector<double> cells = CsvNumbers(Slurp(dir_ / "run.csv"));
  ASSERT_EQ(cells.size(), 22u);
  const double expected[] = {7,
                             7.0 / 6 - 1,
                             1,
                             1.0 / 3,
                             0.1 + 0.2,
                             1.0 / 3,
                             2.0 / 3,
                             120 - 1.0 / 3,
                             0.1 + 0.2,
                             1.0 / 3,
                             2.0 / 3,
                             10.0 / 3,
                             EnergyPerServedTokenJ(run),
                             impact.high.p50_latency,
                             impact.high.p99_latency,
                             impact.high.throughput,
                             impact.low.p50_latency,
                             impact.low.p99_latency,
                             impact.low.throughput,
                             impact.energy_per_token};
  for (size_t c = 0; c < std::size(expected); ++c) EXPECT_EQ(cells[c + 1], expected[c]) << "run.csv column " << c + 1;
  EXPECT_DOUBLE_EQ(EnergyPerServedTokenJ(run), 10.0 / 3 * 3.6e6 / 14) << "the row's energy over both classes' tokens";

  // Per minute: the end, mean and max of the run's readings, then the unconstrained run's.
  cells = CsvNumbers(Slurp(dir_ / "row_power.csv"));
  ASSERT_EQ(cells.size(), 5u);
  const double mean = (0.0 + static_cast<double>(0.1f) + static_cast<double>(0.2f) + static_cast<double>(0.4f)) / 3;
  EXPECT_EQ(cells[0], 60);
  EXPECT_EQ(cells[1], mean);
  EXPECT_EQ(cells[2], static_cast<double>(0.4f));
  EXPECT_EQ(cells[3], mean);
  EXPECT_EQ(CsvNumbers(Slurp(dir_ / "row_power.csv"), 1)[2], static_cast<double>(0.9f));

  SweepResult sweep;
  sweep.baseline_servers = 6;
  sweep.added_fractions = {1.0 / 3};
  SweepPoint point;
  point.added_fraction = 1.0 / 3;
  point.servers = 8;
  point.run = run;
  point.impact = impact;
  sweep.points = {point};
  sweep.max_added_held = {-1};
  st = WriteSweepReport((dir_ / "sweep").string(), context, sweep);
  ASSERT_TRUE(st.ok()) << st.error().message;
  cells = CsvNumbers(Slurp(dir_ / "sweep" / "sweep.csv"));
  ASSERT_EQ(cells.size(), 22u);
  EXPECT_EQ(cells[2], 1.0 / 3);
  EXPECT_EQ(cells[4], 1.0 / 3);
  EXPECT_EQ(cells[13], EnergyPerServedTokenJ(run));
  EXPECT_EQ(cells[14], impact.high.p50_latency);
  EXPECT_EQ(cells[20], impact.energy_per_token);
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
