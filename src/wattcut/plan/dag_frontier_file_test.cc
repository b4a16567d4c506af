#include "wattcut/plan/dag_frontier_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "wattcut/plan/dag_export.h"
#include "wattcut/plan/dag_problem.h"
#include "wattcut/plan/frontier_file.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

// Every point, duration and knob of `b` equals `a`'s, and so do the names and devices.
void ExpectSameDagFrontier(const DagFrontier& a, const DagFrontier& b) {
  ASSERT_EQ(a.points().size(), b.points().size());
  EXPECT_EQ(a.setup().unit_time_s, b.setup().unit_time_s);
  ASSERT_EQ(a.setup().devices.size(), b.setup().devices.size());
  for (size_t d = 0; d < a.setup().devices.size(); ++d) {
    EXPECT_EQ(a.setup().devices[d].name, b.setup().devices[d].name);
    EXPECT_EQ(a.setup().devices[d].blocking_power_w, b.setup().devices[d].blocking_power_w);
  }
  ASSERT_EQ(a.setup().operations.size(), b.setup().operations.size());
  for (size_t op = 0; op < a.setup().operations.size(); ++op) {
    EXPECT_EQ(a.setup().operations[op].name, b.setup().operations[op].name);
    EXPECT_EQ(a.setup().operations[op].device, b.setup().operations[op].device);
    EXPECT_EQ(a.setup().operations[op].options, b.setup().operations[op].options);
  }
  for (size_t i = 0; i < a.points().size(); ++i) {
    EXPECT_EQ(a.points()[i].duration_units, b.points()[i].duration_units) << i;
    EXPECT_EQ(a.points()[i].time_s, b.points()[i].time_s) << i;
    EXPECT_EQ(a.points()[i].energy_j, b.points()[i].energy_j) << i;
    EXPECT_EQ(a.points()[i].effective_energy_j, b.points()[i].effective_energy_j) << i;
    EXPECT_EQ(a.points()[i].peak_1s_power_w, b.points()[i].peak_1s_power_w) << i;
    ASSERT_EQ(a.DurationsAt(i), b.DurationsAt(i)) << i;
    ASSERT_EQ(a.KnobsAt(i), b.KnobsAt(i)) << i;
  }
}

// Two devices (one with a name that needs escaping), three operations, one without a device
// and a negative knob; three points.
DagFrontier Small() {
  DagFrontier::Setup setup;
  setup.unit_time_s = 0.5;
  setup.devices = {{"gpu0", 70.25}, {"node 1/gpu%1", 0}};
  setup.operations = {
      {"F0", 0, {{1, 1980}, {2, 1410}}}, {"copy\tout", -1, {{3, -7}}}, {"B 0", 1, {{2, 1980}, {2, 1800}, {4, 1200}}}};
  DagFrontier frontier(setup, {2, 3, 4});
  frontier.AddPoint({9, 4.5, 100, 80}, {});
  frontier.AddPoint({8, 4.0, 101, 82}, {{2, 3}});
  frontier.AddPoint({7, 3.5, 103, 85}, {{0, 1}, {2, 2}});
  return frontier;
}

TEST(DagFrontierFile, ASmallFrontierReadsBackExactly) {
  DagFrontier frontier = Small();
  for (size_t i = 0; i < frontier.points().size(); ++i) frontier.SetPeakPower(i, 200.0 + 1.0 / 3 * i);
  const std::string text = DagFrontierFileText(frontier);
  EXPECT_EQ(text.rfind("wattcut.dag_frontier/v1\nunit_time_s 0.5\ndevices 2\ndevice gpu0 70.25\n"
                       "device node%201/gpu%251 0\noperations 3\noperation F0 0 1:1980 2:1410\n"
                       "operation copy%09out -1 3:-7\noperation B%200 1 2:1980 2:1800 4:1200\nstart 2 3 4\n",
                       0),
            0u)
      << text;
  auto back = ParseDagFrontierFile(text, "f");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameDagFrontier(frontier, *back);
  EXPECT_EQ(DagFrontierFileText(*back), text);
  EXPECT_EQ(back->KnobsAt(1), (std::vector<int>{1410, -7, 1800}));
  EXPECT_EQ(back->blocking_power_w(), 70.25);
}

TEST(DagFrontierFile, DamageIsNamedByLineAndField) {
  const std::string good = DagFrontierFileText(Small());
  auto refused = [&](std::string text, const std::string& expected) {
    auto read = ParseDagFrontierFile(text, "d.wattcut");
    ASSERT_FALSE(read.ok()) << expected;
    EXPECT_EQ(read.error().code, ErrorCode::kCorruption);
    EXPECT_NE(read.error().message.find(expected), std::string::npos) << read.error().message;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  refused("", "d.wattcut:0: expected the format line 'wattcut.dag_frontier/v1'");
  refused(replaced("wattcut.dag_frontier/v1", "wattcut.frontier/v1"), "d.wattcut:1: expected the format line");
  // Cut at every line: the end marker, or the line after, is missing.
  for (size_t at = good.find('\n'); at + 1 < good.size(); at = good.find('\n', at + 1)) {
    refused(good.substr(0, at + 1), "the file ends early");
  }
  refused(replaced("unit_time_s 0.5", "unit_time_s 0"), "d.wattcut:2: unit_time_s: expected a number > 0");
  refused(replaced("devices 2", "devices 3"), "d.wattcut:6: expected a 'device' line, got 'operations'");
  refused(replaced("device gpu0 70.25", "device gpu0 -1"), "d.wattcut:4: blocking_power_w: expected a finite number");
  refused(replaced("device node%201/gpu%251", "device gpu0"), "d.wattcut:5: device name: 'gpu0' names two devices");
  refused(replaced("operation B%200", "operation F0"), "d.wattcut:9: operation name: 'F0' names two operations");
  refused(replaced("copy%09out", "copy%0Gout"), "d.wattcut:8: operation name: expected %XX (two hex digits)");
  refused(replaced("copy%09out -1", "copy%09out 2"), "d.wattcut:8: operation device: expected an integer in [-1, 1]");
  refused(replaced("2:1980 2:1800 4:1200", "2:1980 4:1800 2:1200"),
          "option: durations must not decrease, got 2 after 4");
  refused(replaced("3:-7", "3:x"), "option DURATION_UNITS:KNOB: expected A:B");
  refused(replaced("operation copy%09out -1 3:-7", "operation copy%09out -1"), "d.wattcut:8: operation: expected NAME");
  refused(replaced("start 2 3 4", "start 2 3"), "start: expected 3 durations");
  refused(replaced(" 2:3\n", " 3:3\n"), "change COMPUTATION:DURATION_UNITS: expected A:B with A in [0, 2]");
  refused(good + "p 1 1 1 1\n", "text after the 'end' line");
}

// Every point of a large DAG frontier (the built-in A40 model's pipeline, 4 stages x 16
// microbatches at 0.5 ms, exported as a DAG and planned as one) reads back with its knobs, and
// the reading side tells a pipeline's frontier file from a DAG's.
TEST(DagFrontierFile, EveryPointOfALargeFrontierReadsBackAndTheKindIsTold) {
  PlannerOptions options;
  options.num_microbatches = 16;
  options.unit_time_s = 0.0005;
  options.p2p_power_w = (*FindGpuModel("a40"))->p2p_power_w;
  const Profile profile = MakeModelProfile(**FindGpuModel("a40"), 4);
  Result<GenericDag> dag = PipelineDag(profile, options);
  ASSERT_TRUE(dag.ok()) << dag.error().message;
  DagPlannerOptions dag_options;
  dag_options.unit_time_s = options.unit_time_s;
  Result<DagFrontier> frontier = ComputeDagFrontier(*dag, dag_options);
  ASSERT_TRUE(frontier.ok()) << frontier.error().message;
  ASSERT_GT(frontier->points().size(), 1000u);
  const std::string text = DagFrontierFileText(*frontier);
  auto back = ParseDagFrontierFile(text, "a40.wattcut");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ExpectSameDagFrontier(*frontier, *back);

  const std::string dir = ::testing::TempDir() + "/dag_frontier_file_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/frontier.wattcut") << text;
  EXPECT_EQ(*ReadFrontierFileKind(dir), FrontierFileKind::kDag);
  ASSERT_TRUE(ReadDagFrontierFile(dir).ok());
  Result<Frontier> as_pipeline = ReadFrontierFile(dir);
  ASSERT_FALSE(as_pipeline.ok());
  EXPECT_NE(as_pipeline.error().message.find("a generic DAG's frontier (wattcut.dag_frontier/v1), not a pipeline's"),
            std::string::npos)
      << as_pipeline.error().message;
  Result<Frontier> pipeline = ComputeFrontier(profile, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.error().message;
  std::ofstream(dir + "/frontier.wattcut", std::ios::trunc) << FrontierFileText(*pipeline);
  EXPECT_EQ(*ReadFrontierFileKind(dir), FrontierFileKind::kPipeline);
  Result<DagFrontier> as_dag = ReadDagFrontierFile(dir);
  ASSERT_FALSE(as_dag.ok());
  EXPECT_NE(as_dag.error().message.find("a pipeline's frontier (wattcut.frontier/v1), not a generic DAG's"),
            std::string::npos)
      << as_dag.error().message;
  std::ofstream(dir + "/frontier.wattcut", std::ios::trunc) << "plan,time\n";
  Result<FrontierFileKind> unknown = ReadFrontierFileKind(dir);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("frontier.wattcut:1: expected the format line"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattcut
