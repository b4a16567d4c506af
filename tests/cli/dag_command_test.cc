// `wattcut dag frontier` and `wattcut dag export` as a user runs them (issue 14, generic DAGs).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/command_runner.h"

namespace wattcut {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunWattcut;
using testing::TempDir;

constexpr const char* kChain = R"({"format": "wattcut.dag/v1", "unit_time_s": 1,
  "operations": [
    {"name": "A", "options": [{"time": 2, "energy": 10, "knob": 1410}, {"time": 1, "energy": 14, "knob": 1980}]},
    {"name": "B", "options": [{"time": 3, "energy": 6, "knob": 1410}, {"time": 2, "energy": 9, "knob": 1980}]}],
  "edges": [["A", "B"]]})";

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// frontier.csv's rows as numbers, the header dropped.
std::vector<std::vector<double>> CsvNumbers(const std::string& path) {
  std::vector<std::vector<double>> rows;
  const std::vector<std::string> lines = Lines(ReadFile(path));
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<double> row;
    std::istringstream in(lines[i]);
    for (std::string cell; std::getline(in, cell, ',');) row.push_back(cell.empty() ? NAN : std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

TEST(DagCommand, TheTwoOperationChainEndToEnd) {
  TempDir dir;
  WriteText(dir.path() + "/chain.json", kChain);
  auto run = RunWattcut("dag frontier --dag " + dir.path() + "/chain.json --cost-model convex-hull --out " +
                        dir.path() + "/out");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("frontier: 3 points from 5.0000 s to 3.0000 s"), std::string::npos) << run.out;
  const std::vector<std::string> csv = Lines(ReadFile(dir.path() + "/out/frontier.csv"));
  // No devices: no power per GPU. Peak 1-s power: the faster operation's power, A's at first
  // (10 J over 2 s, then B's 6 J over 3 s: 5 W), A's 14 J over 1 s at the end.
  EXPECT_EQ(csv, (std::vector<std::string>{
                     "plan,time,energy,duration_units,effective_energy,avg_power_w,avg_power_per_gpu_w,peak_1s_power_w",
                     "0,5,16,5,16,3.2,,5", "1,4,19,4,19,4.75,,5", "2,3,23,3,23,7.666666666666667,,14"}));
  const std::vector<std::string> plans = Lines(ReadFile(dir.path() + "/out/plans.jsonl"));
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(plans[0]),
            nlohmann::json::parse(R"({"point": 0, "time_s": 5.0, "energy_j": 16.0, "knobs": {"A": 1410, "B": 1410}})"));
  EXPECT_EQ(nlohmann::json::parse(plans[1]),
            nlohmann::json::parse(R"({"point": 1, "time_s": 4.0, "energy_j": 19.0, "changed_knobs": {"B": 1980}})"));
  EXPECT_EQ(nlohmann::json::parse(plans[2]),
            nlohmann::json::parse(R"({"point": 2, "time_s": 3.0, "energy_j": 23.0, "changed_knobs": {"A": 1980}})"));
}

// A pipeline exported as a DAG file and planned as one gives `wattcut frontier`'s frontier.
TEST(DagCommand, AnExportedPipelinePlansToWattcutFrontiersFrontier) {
  for (const std::string schedule : {"1f1b", "gpipe", "zb-h1", "interleaved --virtual-stages 2"}) {
    SCOPED_TRACE(schedule);
    TempDir dir;
    const std::string shape = "--stages 4 --microbatches 4 --schedule " + schedule;
    auto exported = RunWattcut("dag export " + shape + " --out " + dir.path() + "/pipeline.json");
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    // The same assumptions as wattcut frontier's (a split backward, stages cut into chunks).
    if (schedule != "1f1b" && schedule != "gpipe") {
      EXPECT_NE(exported.err.find("wattcut dag export: warning: "), std::string::npos) << exported.err;
    }
    EXPECT_NE(exported.out.find("operations"), std::string::npos) << exported.out;
    auto generic = RunWattcut("dag frontier --dag " + dir.path() + "/pipeline.json --out " + dir.path() + "/dag");
    ASSERT_EQ(generic.exit_code, 0) << generic.err;
    auto pipeline = RunWattcut("frontier " + shape + " --out " + dir.path() + "/pipeline");
    ASSERT_EQ(pipeline.exit_code, 0) << pipeline.err;
    const auto dag_rows = CsvNumbers(dir.path() + "/dag/frontier.csv");
    const auto pipeline_rows = CsvNumbers(dir.path() + "/pipeline/frontier.csv");
    ASSERT_EQ(dag_rows.size(), pipeline_rows.size());
    ASSERT_GT(dag_rows.size(), 10u);
    for (size_t i = 0; i < dag_rows.size(); ++i) {
      SCOPED_TRACE("point " + std::to_string(i));
      EXPECT_EQ(dag_rows[i][1], pipeline_rows[i][1]);                                // time
      EXPECT_NEAR(dag_rows[i][2], pipeline_rows[i][2], 1e-9 * pipeline_rows[i][2]);  // energy
      EXPECT_EQ(dag_rows[i][3], pipeline_rows[i][3]);                                // duration_units
      EXPECT_NEAR(dag_rows[i][4], pipeline_rows[i][4], 1e-9 * std::abs(pipeline_rows[i][4]));
      EXPECT_NEAR(dag_rows[i][5], pipeline_rows[i][5], 1e-9 * pipeline_rows[i][5]);  // avg_power_w
      // The exported DAG names the pipeline's devices and their blocking power, so its power per
      // GPU and its execution timeline's peak 1-s power are the pipeline's.
      EXPECT_NEAR(dag_rows[i][6], pipeline_rows[i][6], 1e-9 * pipeline_rows[i][6]);  // avg_power_per_gpu_w
      EXPECT_NEAR(dag_rows[i][7], pipeline_rows[i][7], 1e-9 * pipeline_rows[i][7]);  // peak_1s_power_w
    }
  }
}

TEST(DagCommand, BadFilesAreRefusedWithFileAndPath) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.json";
  struct Case {
    std::string text, error;
  };
  std::string unknown = kChain;
  unknown.replace(unknown.find("[\"A\", \"B\"]"), 10, "[\"A\", \"Z\"]");
  std::string negative = kChain;
  negative.replace(negative.find("\"time\": 3"), 9, "\"time\": -1");
  const std::vector<Case> cases = {
      {unknown, path + ": edges[0][1]: unknown operation 'Z'"},
      {negative, path + ": operations[1].options[0].time: expected a positive finite number of seconds, got -1"},
      {"{\"format\": \"wattcut.dag/v1\",\n \"operations\": [}", path + ": line 2, column 17: not valid JSON"},
      {R"({"format": "wattcut.dag/v1", "operations": [{"name": "x", "options": [{"time": 1e-9, "energy": 1,
         "knob": 3}]}]})",
       path + ": operation 'x' (operations[0]): the time at 3 MHz"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    WriteText(path, c.text);
    auto run = RunWattcut("dag frontier --dag " + path + " --out " + dir.path() + "/out");
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find("wattcut dag frontier: error: " + c.error), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(dir.path() + "/out"));
  }
  auto missing = RunWattcut("dag frontier --dag " + dir.path() + "/none.json --out " + dir.path() + "/out");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(dir.path() + "/none.json: cannot open the DAG file"), std::string::npos) << missing.err;
  auto no_dag = RunWattcut("dag frontier --out " + dir.path() + "/out");
  EXPECT_EQ(no_dag.exit_code, 2);
}

TEST(DagCommand, UnitTimeFlagOverridesTheFile) {
  TempDir dir;
  WriteText(dir.path() + "/chain.json", kChain);
  auto run = RunWattcut("dag frontier --dag " + dir.path() + "/chain.json --unit-time 0.5 --cost-model convex-hull " +
                        "--out " + dir.path() + "/out");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = CsvNumbers(dir.path() + "/out/frontier.csv");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0][3], 10);  // 5 s in half-second units
  EXPECT_EQ(rows[0][1], 5);
}

TEST(DagCommand, ExportRefusesToOverwriteUnlessAsked) {
  TempDir dir;
  const std::string out = dir.path() + "/p.json";
  ASSERT_EQ(RunWattcut("dag export --stages 2 --microbatches 2 --out " + out).exit_code, 0);
  const std::string first = ReadFile(out);
  EXPECT_EQ(first.rfind("{\"format\": \"wattcut.dag/v1\"", 0), 0u);
  EXPECT_NE(first.find("\"forward d1 c0 m1\""), std::string::npos);
  auto again = RunWattcut("dag export --stages 2 --microbatches 3 --out " + out);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(out + ": exists (use --overwrite to replace it)"), std::string::npos) << again.err;
  EXPECT_EQ(ReadFile(out), first);
  ASSERT_EQ(RunWattcut("dag export --stages 2 --microbatches 3 --overwrite --out " + out).exit_code, 0);
  EXPECT_NE(ReadFile(out), first);
  auto bad = RunWattcut("dag export --stages 2 --microbatches 2 --unit-time 0 --out " + dir.path() + "/q.json");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir.path() + "/q.json"));
}

// The issue's own spelling: `wattcut frontier --export-dag` writes DIR/dag.json beside the pipeline's
// frontier, and `wattcut frontier --dag` plans it as `wattcut dag frontier` does, to the same
// times and energies; a pipeline's options with --dag are refused, naming them.
TEST(DagCommand, FrontierExportsAndPlansTheDagItself) {
  TempDir dir;
  auto pipeline = RunWattcut("frontier --gpu-model a100-sxm --stages 4 --microbatches 4 --export-dag --out " +
                             dir.path() + "/pipeline");
  ASSERT_EQ(pipeline.exit_code, 0) << pipeline.err;
  EXPECT_NE(pipeline.out.find("/dag.json"), std::string::npos) << pipeline.out;
  ASSERT_TRUE(fs::exists(dir.path() + "/pipeline/dag.json"));

  auto dag = RunWattcut("frontier --dag " + dir.path() + "/pipeline/dag.json --out " + dir.path() + "/dag");
  ASSERT_EQ(dag.exit_code, 0) << dag.err;
  auto same = RunWattcut("dag frontier --dag " + dir.path() + "/pipeline/dag.json --out " + dir.path() + "/same");
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(ReadFile(dir.path() + "/dag/frontier.csv"), ReadFile(dir.path() + "/same/frontier.csv"));
  EXPECT_EQ(ReadFile(dir.path() + "/dag/plans.jsonl"), ReadFile(dir.path() + "/same/plans.jsonl"));

  const auto from_pipeline = CsvNumbers(dir.path() + "/pipeline/frontier.csv");
  const auto from_dag = CsvNumbers(dir.path() + "/dag/frontier.csv");
  ASSERT_EQ(from_dag.size(), from_pipeline.size());
  for (size_t i = 0; i < from_dag.size(); ++i) {
    for (size_t column = 1; column <= 4; ++column) {  // time, energy, duration_units, effective_energy
      EXPECT_DOUBLE_EQ(from_dag[i][column], from_pipeline[i][column]) << "point " << i << " column " << column;
    }
  }

  auto refused = RunWattcut("frontier --dag " + dir.path() +
                            "/pipeline/dag.json --microbatches 8 --schedule gpipe "
                            "--out " +
                            dir.path() + "/refused");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--dag plans the DAG file's operations and options: --microbatches, --schedule "
                             "describe a pipeline and do not apply"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/refused"));

  // `wattcut plan` reads a DAG's frontier.wattcut too: the same lookups, every operation's knob.
  auto show = RunWattcut("plan show " + dir.path() + "/dag --point 0");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const nlohmann::json plan = nlohmann::json::parse(show.out);
  EXPECT_EQ(plan["format"], "wattcut.dag_plan/v1");
  EXPECT_EQ(plan["point"], 0);
  EXPECT_DOUBLE_EQ(plan["time_s"].get<double>(), from_dag[0][1]);
  EXPECT_EQ(plan["knobs"].size(), 4u * 4u * 2u) << show.out;  // 4 stages x 4 microbatches x (F, B)
  auto zeus = RunWattcut("plan show " + dir.path() + "/dag --point 0 --format zeus");
  EXPECT_EQ(zeus.exit_code, 1);
  EXPECT_NE(zeus.err.find("a generic DAG's plan has no Zeus form"), std::string::npos) << zeus.err;
}

}  // namespace
}  // namespace wattcut
