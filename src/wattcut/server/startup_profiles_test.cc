// Start-up profiles: read with the file named in every error, one per stage count, their
// frontiers the planner's own, and matched to a job by pp_degree and planner settings.
#include "wattcut/server/startup_profiles.h"
#include "wattcut/server/registry_testing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "wattcut/plan/frontier_file.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/server/registry_harness_testing.h"

namespace wattcut::server {
namespace {

using testing::SmallProfileCsv;
using testing::TempDir;

PlannerSettings Planner(int microbatches) {
  PlannerSettings planner;
  planner.num_microbatches = microbatches;
  planner.p2p_power_w = 40;
  return planner;
}

TEST(StartupProfiles, ReadsTheFileWithItsStageCountAndText) {
  TempDir dir("startup_profiles");
  const std::string path = dir.Write("two.csv", SmallProfileCsv(2));
  auto profile = ReadStartupProfile(path);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->num_stages(), 2);
  EXPECT_EQ(profile->path, path);
  EXPECT_EQ(profile->file_name, "two.csv");
  EXPECT_EQ(profile->source(), "startup:two.csv");
  EXPECT_EQ(profile->csv, SmallProfileCsv(2));
  EXPECT_TRUE(profile->warnings.empty());
  EXPECT_EQ(profile->frontier, nullptr);  // not computed yet
}

TEST(StartupProfiles, ABadFileIsRefusedWithTheReadersMessage) {
  TempDir dir("startup_profiles");
  std::string csv = SmallProfileCsv(2);
  const size_t third_line = csv.find('\n', csv.find('\n') + 1) + 1;
  csv.replace(csv.find(',', csv.find(',', csv.find(',', third_line) + 1) + 1) + 1, 1, "x");  // line 3's time
  const std::string bad = dir.Write("bad.csv", csv);
  auto refused = ReadStartupProfile(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message.rfind(bad + ":3: column 'time'", 0), 0u) << refused.error().message;

  auto missing = ReadStartupProfile(dir.path() + "/absent.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, dir.path() + "/absent.csv: cannot open file for reading");
  auto folder = ReadStartupProfile(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().message, dir.path() + ": is a directory, expected a CSV file");
}

TEST(StartupProfiles, TwoFilesWithOneStageCountAreRefused) {
  TempDir dir("startup_profiles");
  const std::string a = dir.Write("a.csv", SmallProfileCsv(2));
  const std::string b = dir.Write("b.csv", SmallProfileCsv(3));
  const std::string c = dir.Write("c.csv", SmallProfileCsv(2));
  auto two = ReadStartupProfiles({a, b});
  ASSERT_TRUE(two.ok()) << two.error().message;
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].num_stages(), 3);
  auto refused = ReadStartupProfiles({a, b, c});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "profiles " + a + " and " + c +
                                         " both have 2 stages; give one profile per stage count (jobs with "
                                         "pp_degree 2 get it)");
}

TEST(StartupProfiles, TheFrontierIsThePlannersWithTheDefaultSettings) {
  TempDir dir("startup_profiles");
  auto profile = ReadStartupProfile(dir.Write("two.csv", SmallProfileCsv(2)));
  ASSERT_TRUE(profile.ok());
  Status unset = ComputeStartupFrontier(*profile, PlannerSettings{});
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.error().message, profile->path + ": its frontier needs num_microbatches (--microbatches)");
  EXPECT_EQ(profile->frontier, nullptr);

  ASSERT_TRUE(ComputeStartupFrontier(*profile, Planner(4)).ok());
  auto expected = ComputeFrontier(*ParseProfileCsv(SmallProfileCsv(2), "expected"), Planner(4).ToPlannerOptions());
  ASSERT_TRUE(expected.ok());
  ASSERT_NE(profile->frontier, nullptr);
  ASSERT_EQ(profile->frontier->points().size(), expected->points().size());
  for (size_t i = 0; i < expected->points().size(); ++i) {
    EXPECT_EQ(profile->frontier->points()[i].time_s, expected->points()[i].time_s) << i;
    EXPECT_EQ(profile->frontier->points()[i].energy_j, expected->points()[i].energy_j) << i;
  }
  EXPECT_EQ(profile->planner, Planner(4));
  EXPECT_GE(profile->compute_seconds, 0);
  // Its stored form reads back as the same frontier.
  auto stored = ParseFrontierFile(profile->frontier_text, "stored");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  EXPECT_EQ(FrontierFileText(*stored), profile->frontier_text);
}

TEST(StartupProfiles, APipelineBeyondThePlannersLimitsIsRefusedNamingTheFile) {
  TempDir dir("startup_profiles");
  auto profile = ReadStartupProfile(dir.Write("two.csv", SmallProfileCsv(2)));
  ASSERT_TRUE(profile.ok());
  Status refused = ComputeStartupFrontier(*profile, Planner(1 << 20));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message.rfind(profile->path + ": ", 0), 0u) << refused.error().message;
  EXPECT_NE(refused.error().message.find("microbatches"), std::string::npos) << refused.error().message;
}

TEST(StartupProfiles, AJobGetsTheOneOfItsStageCountAndSettings) {
  TempDir dir("startup_profiles");
  auto read =
      ReadStartupProfiles({dir.Write("two.csv", SmallProfileCsv(2)), dir.Write("three.csv", SmallProfileCsv(3))});
  ASSERT_TRUE(read.ok());
  StartupProfiles profiles;
  for (StartupProfile& p : *read) {
    ASSERT_TRUE(ComputeStartupFrontier(p, Planner(4)).ok());
    profiles.push_back(std::make_shared<const StartupProfile>(std::move(p)));
  }
  EXPECT_EQ(MatchStartupProfile(profiles, 2, Planner(4)), profiles[0]);
  EXPECT_EQ(MatchStartupProfile(profiles, 3, Planner(4)), profiles[1]);
  EXPECT_EQ(MatchStartupProfile(profiles, 4, Planner(4)), nullptr);  // no profile of 4 stages
  EXPECT_EQ(MatchStartupProfile(profiles, 2, Planner(8)), nullptr);  // other settings
  PlannerSettings gpipe = Planner(4);
  gpipe.schedule = PipelineScheduleKind::kGPipe;
  EXPECT_EQ(MatchStartupProfile(profiles, 2, gpipe), nullptr);
  // A profile whose frontier was not computed is given to no job.
  auto uncomputed = ReadStartupProfile(dir.Write("four.csv", SmallProfileCsv(4)));
  ASSERT_TRUE(uncomputed.ok());
  profiles.push_back(std::make_shared<const StartupProfile>(std::move(*uncomputed)));
  EXPECT_EQ(MatchStartupProfile(profiles, 4, Planner(4)), nullptr);
}

}  // namespace
}  // namespace wattcut::server
