// The registry with a real JobStore in a temporary folder, without a server process: the
// error codes each endpoint answers with, write-through, and a stored frontier served at
// once after a restart (or recomputed, saying so, when it cannot be read).
#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace wattcut::server {
namespace {

using nlohmann::json;

using testing::TempDir;

struct FrontierJobHarness : testing::RegistryHarness {
  using RegistryHarness::RegistryHarness;
  std::string JobWithFrontier() {
    JobRegistration reg;
    reg.info.pp_degree = 2;
    reg.info.world_size = 2;
    std::string id = Ok(registry->RegisterJob(reg)).get<std::string>();
    ProfileUpload upload;
    upload.csv = testing::SmallProfileCsv();
    PlannerSettings planner;
    planner.num_microbatches = 4;
    upload.planner = planner;
    Ok(registry->UploadProfile(id, upload));
    EXPECT_EQ(FrontierWhenDone(id)["state"], "ready");
    return id;
  }
};

TEST(JobRegistry, EachFailureHasTheCodeOfWhatWentWrong) {
  TempDir dir("codes");
  FrontierJobHarness r(dir.path());
  EXPECT_EQ(r.registry->GetJob("nope").error().code, ErrorCode::kNotFound);
  JobRegistration reg;
  reg.info.pp_degree = 2;
  reg.info.world_size = 2;
  std::string id = r.Ok(r.registry->RegisterJob(reg)).get<std::string>();
  RankInfo rank{0, 0, 0, 0, {1410, 900}};
  r.Ok(r.registry->RegisterRank(id, rank));
  EXPECT_EQ(r.registry->RegisterRank(id, rank).error().code, ErrorCode::kConflict);
  RankInfo outside{5, 0, 0, 0, {1410}};
  Answer out_of_range = r.registry->RegisterRank(id, outside);
  EXPECT_EQ(out_of_range.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(out_of_range.error().message, "job '" + id + "': rank 5 is out of range [0, 2)");
  EXPECT_EQ(r.registry->FetchSchedule(id, 1).error().code, ErrorCode::kConflict);  // not registered
  EXPECT_EQ(r.registry->FrontierPoints(id, 0, 10).error().code, ErrorCode::kConflict);
  EXPECT_EQ(r.registry->ComputeFrontierNow(id).error().code, ErrorCode::kConflict);  // no profile
  ProfileUpload bad;
  bad.csv = "stage,instruction\n";
  EXPECT_EQ(r.registry->UploadProfile(id, bad).error().code, ErrorCode::kInvalidArgument);
  // The job is registered without num_microbatches: the round is refused.
  RankInfo second{1, 0, 1, 0, {1410, 900}};
  r.Ok(r.registry->RegisterRank(id, second));
  EXPECT_EQ(r.registry->PreviewSchedule(id, 0).error().code, ErrorCode::kConflict);
}

TEST(JobRegistry, AStoredFrontierIsReadyOnTheFirstAnswerAfterARestart) {
  TempDir dir("restart");
  std::string id;
  json before;
  {
    FrontierJobHarness r(dir.path());
    id = r.JobWithFrontier();
    before = r.Ok(r.registry->FrontierStatus(id));
    r.Ok(r.registry->SelectPlan(id, PlanSelection{PlanSelection::Kind::kMinEnergy, 0}));
  }
  FrontierJobHarness again(dir.path());
  json after = again.Ok(again.registry->FrontierStatus(id));
  EXPECT_EQ(after["state"], "ready");
  EXPECT_EQ(after["num_points"], before["num_points"]);
  EXPECT_EQ(after["fastest"], before["fastest"]);
  EXPECT_EQ(after["min_energy"], before["min_energy"]);
  EXPECT_EQ(after["selected"], before["min_energy"]);
  EXPECT_EQ(after["compute_seconds"], before["compute_seconds"]);
  EXPECT_FALSE(after.contains("note"));
  EXPECT_EQ(again.Ok(again.registry->FrontierPoints(id, 0, 100000)),
            json::parse(*again.registry->FrontierPoints(id, 0, 100000)));
}

// What the registry accepts it loads again: a job registered with no planner settings (a plain
// Zeus client, a server without --microbatches) is stored with num_microbatches not set, comes
// back from a restart exactly so, and takes its settings afterwards.
TEST(JobRegistry, AJobWhosePlannerIsNotSetYetIsLoadedAsExactlyThatAfterARestart) {
  TempDir dir("unset_planner");
  std::string id;
  json before;
  {
    FrontierJobHarness r(dir.path());
    JobRegistration reg;
    reg.info.pp_degree = 2;
    reg.info.world_size = 2;
    id = r.Ok(r.registry->RegisterJob(reg)).get<std::string>();
    before = r.Ok(r.registry->GetJob(id));
  }
  FrontierJobHarness again(dir.path());
  EXPECT_TRUE(again.registry->quarantined_jobs().empty())
      << again.registry->quarantined_jobs().front().job_id << ": " << again.registry->quarantined_jobs().front().error;
  json after = again.Ok(again.registry->GetJob(id));
  EXPECT_EQ(after["planner"], before["planner"]);
  EXPECT_TRUE(after["planner"]["num_microbatches"].is_null()) << after["planner"];
  PlannerSettings planner;
  planner.num_microbatches = 4;
  again.Ok(again.registry->SetPlanner(id, planner));
  EXPECT_EQ(again.Ok(again.registry->GetJob(id))["planner"]["num_microbatches"], 4);
}

TEST(JobRegistry, AStoredFrontierThatCannotBeReadIsRecomputedAndSaysSo) {
  TempDir dir("damaged");
  std::string id;
  json before;
  {
    FrontierJobHarness r(dir.path());
    id = r.JobWithFrontier();
    before = r.Ok(r.registry->FrontierStatus(id));
    ASSERT_TRUE(r.store->PutFrontier(id, "wattcut.frontier/v1\nunit_time_s x\n", "{}").ok());
  }
  FrontierJobHarness again(dir.path());
  json after = again.FrontierWhenDone(id);
  EXPECT_EQ(after["state"], "ready");
  EXPECT_EQ(after["num_points"], before["num_points"]);
  ASSERT_TRUE(after.contains("note"));
  EXPECT_NE(after["note"].get<std::string>().find("the stored frontier could not be read (job " + id +
                                                  " stored frontier:2: unit_time_s: expected a finite number"),
            std::string::npos)
      << after["note"];
  EXPECT_NE(after["note"].get<std::string>().find("so it was computed again"), std::string::npos);
  // Computed again, it is stored again: the next start has no note.
  again.registry.reset();
  FrontierJobHarness third(dir.path());
  EXPECT_EQ(third.Ok(third.registry->FrontierStatus(id))["state"], "ready");
  EXPECT_FALSE(third.Ok(third.registry->FrontierStatus(id)).contains("note"));
}

TEST(JobRegistry, NewPlannerSettingsAreNotServedTheOldFrontierAfterARestart) {
  TempDir dir("settings");
  std::string id;
  json old_frontier;
  {
    FrontierJobHarness r(dir.path());
    id = r.JobWithFrontier();
    old_frontier = r.Ok(r.registry->FrontierStatus(id));
    // As if the server died right after the new settings were stored, before recomputing.
    ASSERT_TRUE(r.store->PutPlanner(id, R"({"num_microbatches":6})").ok());
  }
  FrontierJobHarness again(dir.path());
  json status = again.Ok(again.registry->FrontierStatus(id));
  json done = again.FrontierWhenDone(id);
  EXPECT_EQ(done["state"], "ready");
  EXPECT_EQ(again.Ok(again.registry->GetJob(id))["planner"]["num_microbatches"], 6);
  // Right after the restart the frontier is being computed, or, on a fast machine, already done:
  // then it is the new one, never the old frontier of the old settings.
  ASSERT_NE(done["num_points"], old_frontier["num_points"]);
  if (status["state"] == "ready") {
    EXPECT_EQ(status["num_points"], done["num_points"]);
  }
}

TEST(JobRegistry, ANewerStateDocumentQuarantinesOnlyItsJob) {
  TempDir dir("newer");
  std::string bad;
  std::string good;
  {
    FrontierJobHarness r(dir.path());
    good = r.JobWithFrontier();
    bad = r.JobWithFrontier();
    ASSERT_TRUE(r.store->PutState(bad, R"({"schema_version":9,"round":0})").ok());
  }
  FrontierJobHarness again(dir.path());
  Answer missing = again.registry->GetJob(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kCorruption);
  EXPECT_NE(missing.error().message.find("schema_version 9 is newer than this server reads"), std::string::npos)
      << missing.error().message;
  EXPECT_EQ(again.Ok(again.registry->FrontierStatus(good))["state"], "ready");
}

// A start-up profile of two stages (ProfileCsv), its frontier computed with `planner`.
std::shared_ptr<const StartupProfile> TwoStageStartupProfile(const std::string& dir, const PlannerSettings& planner) {
  const std::string path = dir + "/two-stages.csv";
  std::ofstream(path) << testing::SmallProfileCsv();
  auto profile = ReadStartupProfile(path);
  EXPECT_TRUE(profile.ok()) << profile.error().message;
  Status computed = ComputeStartupFrontier(*profile, planner);
  EXPECT_TRUE(computed.ok()) << computed.error().message;
  return std::make_shared<const StartupProfile>(std::move(*profile));
}

TEST(JobRegistry, ANewJobOfAStartupProfilesDepthAndSettingsHasItsPlanAtOnce) {
  TempDir dir("startup");
  TempDir files("startup_files");
  JobRegistry::Options options;
  options.default_planner.num_microbatches = 4;
  auto startup = TwoStageStartupProfile(files.path(), options.default_planner);
  options.startup_profiles = {startup};
  std::string id;
  json frontier;
  {
    FrontierJobHarness r(dir.path(), options);
    JobRegistration reg;  // a Zeus client's: no planner, no profile
    reg.info.pp_degree = 2;
    reg.info.dp_degree = 2;
    reg.info.world_size = 4;
    id = r.Ok(r.registry->RegisterJob(reg)).get<std::string>();
    json job = r.Ok(r.registry->GetJob(id));
    EXPECT_EQ(job["profile_source"], "startup:two-stages.csv");
    EXPECT_EQ(job["profile_warnings"], json::array());
    frontier = r.Ok(r.registry->FrontierStatus(id));
    EXPECT_EQ(frontier["state"], "ready");  // at registration: no computation
    EXPECT_EQ(frontier["num_points"], startup->frontier->points().size());
    // With its peak powers, so that a power target is decided by peak power.
    json points = r.Ok(r.registry->FrontierPoints(id, 0, 10000))["points"];
    ASSERT_FALSE(points.empty());
    for (const json& p : points) EXPECT_TRUE(p["peak_1s_power_w"].is_number()) << p.dump();
    for (int rank = 0; rank < 4; ++rank)
      r.Ok(r.registry->RegisterRank(id, RankInfo{rank, rank / 2, rank % 2, 0, {1410, 1200, 900}}));
    // The first round serves the selected plan (the fastest point) of that frontier.
    for (int rank = 0; rank < 4; ++rank) {
      json preview = r.Ok(r.registry->PreviewSchedule(id, rank));
      EXPECT_EQ(preview["mode"], "plan");
      EXPECT_EQ(preview["round"], 1);
      EXPECT_EQ(preview["plan_index"], startup->frontier->fastest_index());
      json expected = json::array();
      const FrequencyPlan plan = startup->frontier->PlanAt(startup->frontier->fastest_index());
      for (const PlannedComputation& c : plan.stages.at(static_cast<size_t>(rank % 2))) {
        expected.push_back({std::string(InstructionName(c.kind)), c.freq_mhz});
      }
      EXPECT_EQ(preview["frequencies"], expected) << "rank " << rank;
      // So does the first deployment, from the first step.
      json deployment = r.Ok(r.registry->FetchDeployment(id, rank, 0, 0));
      EXPECT_EQ(deployment["version"], 1);
      EXPECT_EQ(deployment["apply_from_step"], 0);
      EXPECT_EQ(deployment["mode"], "plan");
      EXPECT_EQ(deployment["plan_index"], startup->frontier->fastest_index());
      EXPECT_EQ(deployment["frequencies"], expected) << "rank " << rank;
    }
    // Jobs of another depth, or with their own settings, start as before: no profile.
    JobRegistration three = reg;
    three.info.pp_degree = 3;
    three.info.world_size = 6;
    std::string other_depth = r.Ok(r.registry->RegisterJob(three)).get<std::string>();
    EXPECT_EQ(r.Ok(r.registry->GetJob(other_depth))["profile_source"], nullptr);
    EXPECT_EQ(r.Ok(r.registry->FrontierStatus(other_depth))["state"], "none");
    JobRegistration own = reg;
    PlannerSettings eight = options.default_planner;
    eight.num_microbatches = 8;
    own.planner = eight;
    std::string own_settings = r.Ok(r.registry->RegisterJob(own)).get<std::string>();
    EXPECT_EQ(r.Ok(r.registry->GetJob(own_settings))["profile_source"], nullptr);
  }
  // Stored with the job: after a restart without the option the job still has both.
  {
    FrontierJobHarness again(dir.path());
    EXPECT_EQ(again.Ok(again.registry->GetJob(id))["profile_source"], "startup:two-stages.csv");
    json after = again.Ok(again.registry->FrontierStatus(id));
    EXPECT_EQ(after["state"], "ready");
    EXPECT_EQ(after["num_points"], frontier["num_points"]);
    EXPECT_EQ(after["fastest"], frontier["fastest"]);
    EXPECT_EQ(again.Ok(again.registry->PreviewSchedule(id, 1))["mode"], "plan");
    EXPECT_EQ(again.Ok(again.registry->FetchDeployment(id, 1, 3, 1)), json({{"version", 1}, {"poll_interval_s", 0.5}}));
    // The job's own profile replaces it.
    ProfileUpload upload;
    upload.csv = testing::SmallProfileCsv();
    again.Ok(again.registry->UploadProfile(id, upload));
    EXPECT_EQ(again.Ok(again.registry->GetJob(id))["profile_source"], "csv");
    EXPECT_EQ(again.FrontierWhenDone(id)["state"], "ready");
  }
}

TEST(JobRegistry, ZeusDefaultResultIsStoredAndMeasuresNoSweepStep) {
  TempDir dir("zeus_result");
  FrontierJobHarness r(dir.path());
  std::string id = testing::RegisterOneRankJob(r);
  ProfilingResult zeus_default;  // Zeus's ProfilingResult: time_breakdown = energy_breakdown = {}
  zeus_default.iter_time = {1.0};
  zeus_default.iter_energy = {200.0};
  // No sweep yet (no round has run): stored.
  r.Ok(r.registry->PostResult(id, zeus_default));
  // The first round starts the sweep at 1410 MHz; a result without breakdowns is stored and
  // answered, and the step still waits for the rank's measurement.
  r.Ok(r.registry->FetchSchedule(id, 0));
  r.Ok(r.registry->PostResult(id, zeus_default));
  json job = r.Ok(r.registry->GetJob(id));
  EXPECT_EQ(job["ranks_with_results"], 1);
  EXPECT_EQ(job["state"]["profiling"]["active"], true);
  EXPECT_EQ(job["state"]["profiling"]["step"], 0);
  EXPECT_EQ(job["state"]["profiling"]["got"], json::array());  // the ranks that reported: none
  // A result with breakdowns that lack the step's lists is still refused, saying what it needs.
  ProfilingResult forward_only = zeus_default;
  forward_only.time_breakdown = {{"forward", {{0.1, 0.1}}}};
  forward_only.energy_breakdown = {{"forward", {{20, 20}}}};
  Answer refused = r.registry->PostResult(id, forward_only);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused.error().message,
            "rank 0: this round profiles 1410 MHz; time_breakdown and energy_breakdown need non-empty 'forward' and "
            "'backward' (or 'backward_input' and 'backward_weight') lists");
  // The measurement itself moves the sweep on.
  ProfilingResult measured = forward_only;
  measured.time_breakdown["backward"] = {{0.2, 0.2}};
  measured.energy_breakdown["backward"] = {{40, 40}};
  r.Ok(r.registry->PostResult(id, measured));
  EXPECT_EQ(r.Ok(r.registry->GetJob(id))["state"]["profiling"]["step"], 1);
}

}  // namespace
}  // namespace wattcut::server
