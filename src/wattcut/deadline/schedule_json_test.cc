#include "wattcut/deadline/schedule_json.h"

#include <gtest/gtest.h>

#include "wattcut/deadline/schedule_charts.h"
#include "wattcut/deadline/schedule_start_testing.h"
#include "wattcut/plot/xml_check_testing.h"

namespace wattcut::deadline {
namespace {

using testing::kStart;

ScheduleRequest TwoPlansFourHours() {
  ScheduleRequest r;
  r.plans = {{0, 2.0, 100, 100}, {1, 1.0, 300, 300}};
  r.start_s = kStart;
  r.deadline_s = kStart + 4 * 3600;
  r.iterations = 9000;
  r.price = StepSeries{"p.csv", "price", {{kStart, 0.1, 2}, {kStart + 3600, 0.3, 3}, {kStart + 7200, 0.1, 4}}};
  return r;
}

TEST(ScheduleJsonTest, SaysEachIntervalsPlansAndTheTotalsAgainstBothBaselines) {
  const ScheduleRequest r = TwoPlansFourHours();
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const nlohmann::json j = ScheduleJson(*s, r, {{"frontier", "dir"}});
  EXPECT_EQ(j["format"], kScheduleFormat);
  EXPECT_EQ(j["objective"], "cost");
  EXPECT_EQ(j["start"], "2026-12-02 00:00:00.000000+00:00");
  EXPECT_EQ(j["inputs"]["frontier"], "dir");
  ASSERT_EQ(j["intervals"].size(), 3u);  // cut at the two price changes
  // The dear hour runs the slowest plan; the cheap hours make up the rest.
  const nlohmann::json& dear = j["intervals"][1];
  EXPECT_DOUBLE_EQ(dear["price"].get<double>(), 0.3);
  ASSERT_EQ(dear["plans"].size(), 1u);
  EXPECT_EQ(dear["plans"][0]["point"], 0);
  EXPECT_DOUBLE_EQ(dear["plans"][0]["iterations_per_s"].get<double>(), 0.5);  // 2 s an iteration
  EXPECT_TRUE(j["intervals"][0]["carbon"].is_null());
  EXPECT_TRUE(j["totals"]["carbon_kg"].is_null());
  EXPECT_DOUBLE_EQ(j["intervals"].back()["progress"].get<double>(), 1.0);
  EXPECT_NEAR(j["totals"]["iterations"].get<double>(), 9000, 1e-6);
  EXPECT_GT(j["saving"]["vs_fastest"].get<double>(), 0);
  EXPECT_TRUE(j["baselines"]["fastest"]["available"].get<bool>());
  EXPECT_EQ(j["baselines"]["fastest"]["point"], 1);
}

TEST(ScheduleChartsTest, BothPicturesAreWellFormedSvg) {
  const ScheduleRequest r = TwoPlansFourHours();
  Result<Schedule> s = ScheduleToDeadline(r);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::string power = SchedulePowerChart(*s, r).ToSvg();
  const std::string progress = ScheduleProgressChart(*s, r).ToSvg();
  EXPECT_EQ(plot::testing::XmlProblem(power), "");
  EXPECT_EQ(plot::testing::XmlProblem(progress), "");
  EXPECT_NE(power.find("deadline"), std::string::npos);
  EXPECT_NE(progress.find("least-energy, all along"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::deadline
