#include "wattcut/plan/plan_files.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace wattcut {
namespace {

Frontier TwoStageFrontier() {
  Frontier::Setup setup;
  const auto F = InstructionKind::kForward;
  const auto B = InstructionKind::kBackward;
  setup.schedule = {{{F, 0}, {B, 0}}, {{F, 0}, {B, 0}}};
  setup.unit_time_s = 0.001;
  std::vector<std::pair<int64_t, int>> options = {{10, 1410}, {12, 1200}};
  setup.options = {{options, options}, {options, options}};
  Frontier frontier(setup, {12, 12, 12, 12});
  frontier.AddPoint({48, 0.048, 50.5, 40}, {});
  frontier.AddPoint({47, 0.047, 51.25, 41}, {{1, 10}});
  return frontier;
}

TEST(PlanFiles, FrontierCsvHasOneRowPerPointSlowestFirst) {
  EXPECT_EQ(FrontierCsv(TwoStageFrontier()),
            "plan,time,energy,duration_units,effective_energy,avg_power_w,avg_power_per_gpu_w,peak_1s_power_w\n"
            "0,0.048,50.5,48,40,1052.0833333333333,526.0416666666666,\n"
            "1,0.047,51.25,47,41,1090.4255319148936,545.2127659574468,\n");
}

// The power columns come after the first five, so readers of those by position still work;
// the peak is empty when it was not computed.
TEST(PlanFiles, FrontierCsvHasThePowerColumnsAtTheEnd) {
  Frontier frontier = TwoStageFrontier();
  frontier.SetPeakPower(1, 1234.5);
  const std::string csv = FrontierCsv(frontier);
  EXPECT_NE(csv.find("\n1,0.047,51.25,47,41,1090.4255319148936,545.2127659574468,1234.5\n"), std::string::npos) << csv;
}

TEST(PlanFiles, FrontierCsvCellsReadBackAsTheSameDoubles) {
  Frontier frontier = TwoStageFrontier();
  frontier.AddPoint({46, 0.1 + 0.2, 1.0 / 3 + 60, 1e7 / 3}, {{1, 10}, {2, 10}});
  const std::string csv = FrontierCsv(frontier);
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  EXPECT_EQ(last,
            "2,0.30000000000000004,60.333333333333336,46,3.3333333333333335e+06,201.1111111111111,"
            "100.55555555555554,\n");
  std::vector<double> cells;
  for (size_t from = 0; from < last.size();) {
    size_t comma = last.find_first_of(",\n", from);
    cells.push_back(std::strtod(last.substr(from, comma - from).c_str(), nullptr));
    from = comma + 1;
  }
  ASSERT_EQ(cells.size(), 8u);
  EXPECT_EQ(cells[1], 0.1 + 0.2);
  EXPECT_EQ(cells[2], 1.0 / 3 + 60);
  EXPECT_EQ(cells[4], 1e7 / 3);
  EXPECT_EQ(cells[5], (1.0 / 3 + 60) / (0.1 + 0.2));
}

TEST(PlanFiles, PlanJsonRoundTrips) {
  Frontier frontier = TwoStageFrontier();
  std::string json = PlanJson(frontier, 1);
  Result<StoredPlan> stored = ParsePlanJson(json, "p.json");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(stored->point, 1u);
  EXPECT_DOUBLE_EQ(stored->energy_j, 51.25);
  ASSERT_EQ(stored->plan.stages.size(), 2u);
  EXPECT_EQ(stored->plan.stages[0][1].kind, InstructionKind::kBackward);
  EXPECT_EQ(stored->plan.stages[0][1].freq_mhz, 1410);
  EXPECT_EQ(stored->plan.stages[0][0].freq_mhz, 1200);
  EXPECT_EQ(stored->plan.stages[0][1].duration_units, 10);
}

TEST(PlanFiles, ZeusLiteralListsInstructionAndFrequencyPerStage) {
  EXPECT_EQ(ZeusPlanLiteral(TwoStageFrontier().PlanAt(1)),
            "[\n"
            "    [(\"forward\", 1200), (\"backward\", 1410)],\n"
            "    [(\"forward\", 1200), (\"backward\", 1200)],\n"
            "]\n");
}

TEST(PlanFiles, ParsePlanJsonNamesTheBadField) {
  EXPECT_EQ(ParsePlanJson("{", "p.json").error().message, "p.json: not valid JSON");
  EXPECT_EQ(ParsePlanJson("{\"format\":\"x\"}", "p.json").error().message,
            "p.json: field 'format': expected \"wattcut.frequency_plan/v1\"");
  std::string bad_instruction =
      R"({"format":"wattcut.frequency_plan/v1","point":0,"time_s":1,"energy_j":1,"unit_time_s":0.001,)"
      R"("stages":[[["sideways",0,1410,3]]]})";
  EXPECT_EQ(ParsePlanJson(bad_instruction, "p.json").error().message,
            "p.json: field 'stages[0][0][0]': expected forward, backward, backward_input or backward_weight");
}

}  // namespace
}  // namespace wattcut
