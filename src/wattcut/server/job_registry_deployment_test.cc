// The registry's barrier-free plan delivery (deployment.h) over a real JobStore, without a
// server process: versions, apply steps, the plan of each pipeline, and a restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;

using testing::TempDir;

using testing::RegistryHarness;

using testing::RegisterJobOfTwoPipelines;

TEST(JobRegistryDeployment, BeforeAPlanEveryRankRunsAtItsHighestClock) {
  TempDir temp("deployment_allmax");
  const std::string& dir = temp.path();
  RegistryHarness r(dir);
  std::string id = RegisterJobOfTwoPipelines(r);
  json d = r.Ok(r.registry->FetchDeployment(id, 1, 0, 7));  // any other version: the whole deployment
  EXPECT_EQ(d["version"], 0);
  EXPECT_EQ(d["mode"], "all_max");
  EXPECT_EQ(d["poll_interval_s"], 0.5);
  ASSERT_EQ(d["frequencies"].size(), 8u);  // 4 forwards and 4 backwards of stage 1
  for (const json& entry : d["frequencies"]) EXPECT_EQ(entry[1], 1410);
  json same = r.Ok(r.registry->FetchDeployment(id, 1, 0, 0));
  EXPECT_EQ(same, (json{{"version", 0}, {"poll_interval_s", 0.5}}));
  EXPECT_EQ(r.registry->FetchDeployment(id, 9, 0, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.registry->FetchDeployment("nope", 0, 0, 0).error().code, ErrorCode::kNotFound);
  // A step no training run reaches is refused before it is counted (it once overflowed an apply step).
  EXPECT_EQ(r.registry->FetchDeployment(id, 1, INT64_MAX, 0).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, 1, 0, 7))["apply_from_step"], d["apply_from_step"]);
}

TEST(JobRegistryDeployment, AStragglerSwitchesTheOtherPipelineFromOneStepOnAndRecoverySwitchesBack) {
  TempDir temp("deployment_straggler");
  const std::string& dir = temp.path();
  std::string id;
  uint64_t version = 0;
  {
    RegistryHarness r(dir);
    id = RegisterJobOfTwoPipelines(r);
    ProfileUpload upload;
    upload.csv = testing::SmallProfileCsv();
    r.Ok(r.registry->UploadProfile(id, upload));
    json status = r.FrontierWhenDone(id);
    ASSERT_EQ(status["state"], "ready");
    const int fastest = status["fastest"]["index"];
    json first = r.Ok(r.registry->FetchDeployment(id, 0, 5, 0));
    EXPECT_EQ(first["mode"], "plan");
    EXPECT_EQ(first["plan_index"], fastest);
    version = first["version"];
    EXPECT_GE(version, 1u);
    // Every rank reports step 12: the change applies after it.
    for (int rank = 0; rank < 4; ++rank) r.Ok(r.registry->FetchDeployment(id, rank, 12, version));

    StragglerReport slow{1, StragglerReport::Kind::kSlowdown, 1.1};
    r.Ok(r.registry->ReportStraggler(id, slow));
    json other = r.Ok(r.registry->FetchDeployment(id, 0, 12, version));  // pipeline 0: not the straggler
    json straggler = r.Ok(r.registry->FetchDeployment(id, 2, 12, version));
    EXPECT_EQ(other["version"], version + 1);
    EXPECT_EQ(straggler["version"], version + 1);
    EXPECT_EQ(other["apply_from_step"], 13);  // no rate known yet: the next step
    EXPECT_EQ(straggler["apply_from_step"], 13);
    EXPECT_LT(other["plan_index"].get<int>(), fastest);  // slower, cheaper
    EXPECT_EQ(straggler["plan_index"], fastest);
    EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, 1, 12, version))["plan_index"], other["plan_index"]);

    r.Ok(r.registry->ReportStraggler(id, StragglerReport{1, StragglerReport::Kind::kRecovered, 0}));
    json back = r.Ok(r.registry->FetchDeployment(id, 0, 14, version + 1));
    EXPECT_EQ(back["version"], version + 2);
    EXPECT_EQ(back["plan_index"], fastest);
    // A report that changes nothing is no new version.
    r.Ok(r.registry->ReportStraggler(id, StragglerReport{1, StragglerReport::Kind::kRecovered, 0}));
    EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, 0, 14, version + 2)).size(), 2u);
    version += 2;
    // Each new version is a plan switch in /metrics (the first one: the frontier replacing AllMax).
    const std::string text = r.metrics.Render();
    EXPECT_NE(text.find("wattcut_plan_switches_total " + std::to_string(version) + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("wattcut_straggler_reports_total{kind=\"straggler\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("wattcut_straggler_reports_total{kind=\"recovered\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("wattcut_stragglers 0\n"), std::string::npos);
  }
  // After a restart the version is the same: a rank that has it is told nothing new.
  RegistryHarness again(dir);
  EXPECT_EQ(again.Ok(again.registry->FetchDeployment(id, 0, 15, version)),
            (json{{"version", version}, {"poll_interval_s", 0.5}}));
  json fresh = again.Ok(again.registry->FetchDeployment(id, 3, 0, 0));  // a restarted rank
  EXPECT_EQ(fresh["version"], version);
  EXPECT_EQ(fresh["mode"], "plan");
}

// Jobs by frontier state: none before a profile, ready once it is planned; a deleted job is gone.
TEST(JobRegistryDeployment, JobsAreCountedByFrontierState) {
  TempDir temp("deployment_job_states");
  const std::string& dir = temp.path();
  RegistryHarness r(dir);
  std::string planned = RegisterJobOfTwoPipelines(r);
  std::string waiting = RegisterJobOfTwoPipelines(r);
  ProfileUpload upload;
  upload.csv = testing::SmallProfileCsv();
  r.Ok(r.registry->UploadProfile(planned, upload));
  ASSERT_EQ(r.FrontierWhenDone(planned)["state"], "ready");
  JobStateCounts counts = r.registry->CountJobStates();
  EXPECT_EQ(counts.by_frontier_state[static_cast<size_t>(FrontierState::kNone)], 1);
  EXPECT_EQ(counts.by_frontier_state[static_cast<size_t>(FrontierState::kReady)], 1);
  EXPECT_EQ(counts.by_frontier_state[static_cast<size_t>(FrontierState::kComputing)], 0);
  EXPECT_EQ(counts.quarantined, 0);
  r.Ok(r.registry->DeleteJob(waiting));
  counts = r.registry->CountJobStates();
  EXPECT_EQ(counts.by_frontier_state[static_cast<size_t>(FrontierState::kNone)], 0);
  EXPECT_EQ(counts.by_frontier_state[static_cast<size_t>(FrontierState::kReady)], 1);
}

// The stragglers gauge counts the pipelines reported and not recovered, over all jobs: after a
// report, after a restart (from the stored job), and not after the job is deleted.
TEST(JobRegistryDeployment, TheStragglersGaugeFollowsReportsRestartsAndDeletes) {
  TempDir temp("deployment_straggler_gauge");
  const std::string& dir = temp.path();
  std::string id;
  {
    RegistryHarness r(dir);
    id = RegisterJobOfTwoPipelines(r);
    r.Ok(r.registry->ReportStraggler(id, StragglerReport{0, StragglerReport::Kind::kSlowdown, 1.2}));
    r.Ok(r.registry->ReportStraggler(id, StragglerReport{1, StragglerReport::Kind::kSlowdown, 1.1}));
    r.Ok(r.registry->ReportStraggler(id, StragglerReport{1, StragglerReport::Kind::kSlowdown, 1.3}));  // again
    EXPECT_NE(r.metrics.Render().find("wattcut_stragglers 2\n"), std::string::npos) << r.metrics.Render();
    r.Ok(r.registry->ReportStraggler(id, StragglerReport{0, StragglerReport::Kind::kRecovered, 0}));
    EXPECT_NE(r.metrics.Render().find("wattcut_stragglers 1\n"), std::string::npos) << r.metrics.Render();
    EXPECT_FALSE(r.registry->ReportStraggler(id, StragglerReport{5, StragglerReport::Kind::kSlowdown, 1.1}).ok());
    EXPECT_NE(r.metrics.Render().find("wattcut_straggler_reports_total{kind=\"straggler\"} 3\n"), std::string::npos);
  }
  RegistryHarness again(dir);
  EXPECT_NE(again.metrics.Render().find("wattcut_stragglers 1\n"), std::string::npos) << again.metrics.Render();
  again.Ok(again.registry->DeleteJob(id));
  EXPECT_NE(again.metrics.Render().find("wattcut_stragglers 0\n"), std::string::npos) << again.metrics.Render();
}

}  // namespace
}  // namespace wattcut::server
