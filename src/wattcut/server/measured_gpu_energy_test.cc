#include "wattcut/server/measured_gpu_energy.h"

#include <gtest/gtest.h>

#include <string>

namespace wattcut::server {
namespace {

using nlohmann::json;

TEST(MeasuredGpuEnergy, ReadsANodesReport) {
  auto report = NodeGpuEnergy::FromJson(
      json::parse(R"({"gpu_energy_j": 12345.6, "duration_s": 34.5, "gpus": [0, 1, 2, 3], "source": "slurm-epilog"})"));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->gpu_energy_j, 12345.6);
  EXPECT_EQ(report->duration_s, 34.5);
  EXPECT_EQ(report->gpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(report->source, "slurm-epilog");
  // The source may be left out (or null), and the GPUs may be none; zero is a measurement.
  auto bare = NodeGpuEnergy::FromJson(json::parse(R"({"gpu_energy_j": 0, "duration_s": 0, "gpus": []})"));
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->source, "");
  EXPECT_TRUE(bare->gpus.empty());
  EXPECT_TRUE(
      NodeGpuEnergy::FromJson(json::parse(R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [], "source": null})")).ok());
  // What it writes reads back as it was.
  EXPECT_EQ(*NodeGpuEnergy::FromJson(report->ToJson()), *report);
}

// Every bad body is refused naming its field and what was expected.
TEST(MeasuredGpuEnergy, RefusesABadReportNamingTheField) {
  const std::string long_source(65, 's');
  const struct {
    std::string body;
    std::string message;
  } cases[] = {
      {R"([1])", "measured GPU energy: expected a JSON object, got array"},
      {R"({"duration_s": 1, "gpus": []})", "field 'gpu_energy_j' is required"},
      {R"({"gpu_energy_j": "12", "duration_s": 1, "gpus": []})", "field 'gpu_energy_j': expected a number, got string"},
      {R"({"gpu_energy_j": -1, "duration_s": 1, "gpus": []})",
       "field 'gpu_energy_j': expected joules in [0, 1e+15], got -1"},
      {R"({"gpu_energy_j": 2e15, "duration_s": 1, "gpus": []})",
       "field 'gpu_energy_j': expected joules in [0, 1e+15], got 2e+15"},
      {R"({"gpu_energy_j": 1, "gpus": []})", "field 'duration_s' is required"},
      {R"({"gpu_energy_j": 1, "duration_s": -0.5, "gpus": []})",
       "field 'duration_s': expected seconds in [0, 1e+10], got -0.5"},
      {R"({"gpu_energy_j": 1, "duration_s": 1})", "field 'gpus' is required (the job's GPUs on the node; [] for none)"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": "0,1"})",
       "field 'gpus': expected a list of GPU indices, got string"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [0, -1]})",
       "field 'gpus[1]': expected a GPU index, an integer in [0, 65535], got -1"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [0, 1.5]})",
       "field 'gpus[1]': expected a GPU index, an integer in [0, 65535], got number"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [70000]})",
       "field 'gpus[0]': expected a GPU index, an integer in [0, 65535], got 70000"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [0, 1, 0]})", "field 'gpus[2]': GPU 0 is listed twice"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [], "source": 7})",
       "field 'source': expected a string, got integer"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [], "source": ")" + long_source + R"("})",
       "field 'source': at most 64 bytes, got 65"},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [], "source": "epi\u001blog"})",
       "field 'source': expected printable text, got \"epi\\x1blog\""},
      {R"({"gpu_energy_j": 1, "duration_s": 1, "gpus": [], "energy_j": 1})", "unknown field 'energy_j'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    auto report = NodeGpuEnergy::FromJson(json::parse(c.body));
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(report.error().message.find(c.message), std::string::npos) << report.error().message;
  }
  // At most kMaxGpusPerNode GPUs.
  json many = {{"gpu_energy_j", 1}, {"duration_s", 1}, {"gpus", json::array()}};
  for (int g = 0; g <= static_cast<int>(kMaxGpusPerNode); ++g) many["gpus"].push_back(g);
  auto too_many = NodeGpuEnergy::FromJson(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().message, "field 'gpus': at most 1024 GPUs, got 1025");
}

TEST(MeasuredGpuEnergy, ANodeIsAHostName) {
  for (const std::string& node : std::vector<std::string>{"gpu-node-017", "n1.cluster.example.org", "a",
                                                          "rack_3-node.7", std::string(253, 'n')}) {
    EXPECT_TRUE(CheckNodeName(node).ok()) << node;
  }
  for (const std::string& node :
       std::vector<std::string>{"", "node 1", "node:1", "n\x1b[2J", "<b>", std::string(254, 'n')}) {
    SCOPED_TRACE(node);
    Status s = CheckNodeName(node);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(s.error().message.find("': expected a host name, 1 to 253 characters of A-Z, a-z, 0-9, '.', '-' and '_'"),
              std::string::npos)
        << s.error().message;
  }
  EXPECT_EQ(CheckNodeName("n\x1b[2J").error().message.rfind("node 'n\\x1b[2J'", 0), 0u);  // no escape sent on
}

TEST(MeasuredGpuEnergy, TheViewSumsTheNodesAndTheStoredFormReadsBack) {
  EXPECT_TRUE(MeasuredGpuEnergyJson({}).is_null());
  MeasuredGpuEnergy measured;
  measured["node-b"] = NodeGpuEnergy{2000.5, 30, {0, 1}, "slurm-epilog"};
  measured["node-a"] = NodeGpuEnergy{1000, 31.5, {2}, ""};
  EXPECT_EQ(TotalGpuEnergyJ(measured), 3000.5);
  EXPECT_EQ(TotalGpus(measured), 3u);
  EXPECT_EQ(MeasuredGpuEnergyJson(measured),
            json::parse(R"({"total_j": 3000.5, "node_count": 2, "gpu_count": 3, "sources": ["slurm-epilog"]})"));
  const json view = MeasuredGpuEnergyNodesJson(measured, 0, 1000);
  EXPECT_EQ(view["total_j"], 3000.5);
  ASSERT_EQ(view["nodes"].size(), 2u);
  EXPECT_EQ(view["nodes"][0], json::parse(R"({"node": "node-a", "gpu_energy_j": 1000, "duration_s": 31.5,
                                               "gpus": [2], "source": ""})"));
  EXPECT_EQ(view["nodes"][1]["node"], "node-b");
  EXPECT_EQ(MeasuredGpuEnergyNodesJson(measured, 1, 1)["nodes"].size(), 1u);
  EXPECT_EQ(MeasuredGpuEnergyNodesJson(measured, 1, 1)["nodes"][0]["node"], "node-b");
  EXPECT_TRUE(MeasuredGpuEnergyNodesJson(measured, 2, 10)["nodes"].empty());

  auto back = StoredMeasuredGpuEnergyFromJson(StoredMeasuredGpuEnergyJson(measured));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, measured);
  // A damaged stored form names the node and the field.
  json damaged = StoredMeasuredGpuEnergyJson(measured);
  damaged["node-a"]["gpus"] = {1, 1};
  auto bad = StoredMeasuredGpuEnergyFromJson(damaged);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "node 'node-a': field 'gpus[1]': GPU 1 is listed twice");
  damaged = StoredMeasuredGpuEnergyJson(measured);
  damaged["bad node"] = damaged["node-a"];
  EXPECT_FALSE(StoredMeasuredGpuEnergyFromJson(damaged).ok());
}

}  // namespace
}  // namespace wattcut::server
