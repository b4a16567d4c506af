#include "wattcut/server/job_views.h"

#include <gtest/gtest.h>

#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using testing::ThreePointFrontier;

TEST(JobViews, AReadyFrontiersStatusShowsItsEndsAndTheSelectedPoint) {
  Frontier frontier = ThreePointFrontier();
  auto status = FrontierStatusJson(FrontierState::kReady, &frontier, 1, AllMaxPoint{0.01, 9.5}, 2.5, "", "");
  EXPECT_EQ(status["state"], "ready");
  EXPECT_EQ(status["num_points"], 3);
  EXPECT_EQ(status["fastest"]["index"], 2);
  EXPECT_EQ(status["min_energy"]["index"], 1);
  EXPECT_EQ(status["selected"]["time_s"], 0.011);
  EXPECT_EQ(status["compute_seconds"], 2.5);
  EXPECT_EQ(status["all_max"], (nlohmann::json{{"time_s", 0.01}, {"energy_j", 9.5}}));
  EXPECT_TRUE(FrontierStatusJson(FrontierState::kReady, &frontier, 1, std::nullopt, 2.5, "", "")["all_max"].is_null());
  EXPECT_FALSE(status.contains("error"));
  EXPECT_FALSE(status.contains("note"));
}

TEST(JobViews, OtherStatesShowTheirErrorAndNote) {
  auto failed = FrontierStatusJson(FrontierState::kFailed, nullptr, 0, std::nullopt, 0, "no memory", "");
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_EQ(failed["error"], "no memory");
  EXPECT_FALSE(failed.contains("num_points"));
  auto computing =
      FrontierStatusJson(FrontierState::kComputing, nullptr, 0, std::nullopt, 0, "", "the stored frontier ...");
  EXPECT_EQ(computing["state"], "computing");
  EXPECT_EQ(computing["note"], "the stored frontier ...");
  EXPECT_FALSE(computing.contains("error"));
  EXPECT_EQ(FrontierStatusJson(FrontierState::kNone, nullptr, 0, std::nullopt, 0, "", "")["state"], "none");
}

TEST(JobViews, PointsArePagedAndCapped) {
  Frontier frontier = ThreePointFrontier();
  auto page = FrontierPointsJson(frontier, 1, 1);
  EXPECT_EQ(page["total"], 3);
  EXPECT_EQ(page["offset"], 1);
  ASSERT_EQ(page["points"].size(), 1u);
  EXPECT_EQ(page["points"][0]["index"], 1);
  EXPECT_EQ(page["points"][0]["duration_units"], 11);
  EXPECT_EQ(page["points"][0]["effective_energy_j"], 95);
  // A frontier stored before the server computed peak powers has none: null, not 0.
  EXPECT_TRUE(page["points"][0]["peak_1s_power_w"].is_null());
  EXPECT_DOUBLE_EQ(page["points"][0]["avg_power_w"].get<double>(),
                   frontier.points()[1].energy_j / frontier.points()[1].time_s);
  EXPECT_EQ(FrontierPointsJson(frontier, 0, 1000000)["points"].size(), 3u);
  EXPECT_EQ(FrontierPointsJson(frontier, 7, 10)["points"].size(), 0u);
}

TEST(JobViews, SummaryAndStragglers) {
  Frontier frontier = ThreePointFrontier();
  auto summary = FrontierSummaryJson(frontier, 1.5);
  EXPECT_EQ(summary["num_points"], 3);
  EXPECT_EQ(summary["fastest_time_s"], 0.010);
  EXPECT_EQ(summary["min_energy_j"], 100);
  Stragglers stragglers;
  stragglers[2] = Straggler{StragglerReport::Kind::kSlowdown, 1.2};
  stragglers[0] = Straggler{StragglerReport::Kind::kIterationTime, 3.5};
  EXPECT_EQ(StragglersJson(stragglers).dump(),
            R"([{"dp_rank":0,"iteration_time_s":3.5},{"dp_rank":2,"slowdown":1.2}])");
}

TEST(JobViews, EachProfileWarningSaysWhatWasLeftOutAndWhy) {
  DroppedFrequency d;
  d.stage = 0;
  d.kind = InstructionKind::kForward;
  d.freq_mhz = 1410;
  d.missing_ranks = {RankId{1, 0, 1}};
  d.num_ranks = 2;
  auto warnings = ProfileWarningsJson({d});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]["stage"], 0);
  EXPECT_EQ(warnings[0]["instruction"], "forward");
  EXPECT_EQ(warnings[0]["freq_mhz"], 1410);
  EXPECT_EQ(warnings[0]["missing_ranks"][0]["tp_rank"], 1);
  EXPECT_EQ(warnings[0]["stage_ranks"], 2);
  EXPECT_EQ(warnings[0]["message"], DroppedFrequencyMessage(d));
}

}  // namespace
}  // namespace wattcut::server
