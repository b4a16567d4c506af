// The registry with a real JobStore in a temporary folder, without a server process: the
// error codes each endpoint answers with, write-through, and a stored frontier served at
// once after a restart (or recomputed, saying so, when it cannot be read).
#include "wattcut/server/job_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

namespace wattcut::server {
namespace {

using nlohmann::json;

class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("wattcut_registry_test_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Two stages, three frequencies each.
std::string ProfileCsv() {
  std::string csv = "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < 2; ++s) {
    for (int f : {1410, 1200, 900}) {
      csv += std::to_string(s) + ",forward," + std::to_string(f) + "," + std::to_string(0.01 * 1410 / f) + "," +
             std::to_string(2.0 + f / 1000.0) + "\n";
      csv += std::to_string(s) + ",backward," + std::to_string(f) + "," + std::to_string(0.02 * 1410 / f) + "," +
             std::to_string(4.0 + f / 500.0) + "\n";
    }
  }
  return csv;
}

struct Registry {
  explicit Registry(const std::string& dir) {
    auto opened = JobStore::Open(dir, SyncMode::kNormal);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    store = std::move(*opened);
    registry = std::make_unique<JobRegistry>(*store, metrics, JobRegistry::Options{});
    Status loaded = registry->Load();
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  }
  json Ok(const Answer& answer) {
    EXPECT_TRUE(answer.ok()) << answer.error().message;
    return answer.ok() ? json::parse(*answer) : json();
  }
  // Until the frontier is no longer computing (bounded: 60,000 naps of 1 ms).
  json FrontierWhenDone(const std::string& id) {
    json status;
    for (int naps = 0; naps < 60000; ++naps) {
      status = Ok(registry->FrontierStatus(id));
      if (status["state"] != "computing") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return status;
  }
  std::string JobWithFrontier() {
    JobRegistration reg;
    reg.info.pp_degree = 2;
    reg.info.world_size = 2;
    std::string id = Ok(registry->RegisterJob(reg)).get<std::string>();
    ProfileUpload upload;
    upload.csv = ProfileCsv();
    PlannerSettings planner;
    planner.num_microbatches = 4;
    upload.planner = planner;
    Ok(registry->UploadProfile(id, upload));
    EXPECT_EQ(FrontierWhenDone(id)["state"], "ready");
    return id;
  }

  Metrics metrics;
  std::unique_ptr<JobStore> store;
  std::unique_ptr<JobRegistry> registry;
};

TEST(JobRegistry, EachFailureHasTheCodeOfWhatWentWrong) {
  TempDir dir("codes");
  Registry r(dir.path());
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
    Registry r(dir.path());
    id = r.JobWithFrontier();
    before = r.Ok(r.registry->FrontierStatus(id));
    r.Ok(r.registry->SelectPlan(id, PlanSelection{PlanSelection::Kind::kMinEnergy, 0}));
  }
  Registry again(dir.path());
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

TEST(JobRegistry, AStoredFrontierThatCannotBeReadIsRecomputedAndSaysSo) {
  TempDir dir("damaged");
  std::string id;
  json before;
  {
    Registry r(dir.path());
    id = r.JobWithFrontier();
    before = r.Ok(r.registry->FrontierStatus(id));
    ASSERT_TRUE(r.store->PutFrontier(id, "wattcut.frontier/v1\nunit_time_s x\n", "{}").ok());
  }
  Registry again(dir.path());
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
  Registry third(dir.path());
  EXPECT_EQ(third.Ok(third.registry->FrontierStatus(id))["state"], "ready");
  EXPECT_FALSE(third.Ok(third.registry->FrontierStatus(id)).contains("note"));
}

TEST(JobRegistry, NewPlannerSettingsAreNotServedTheOldFrontierAfterARestart) {
  TempDir dir("settings");
  std::string id;
  {
    Registry r(dir.path());
    id = r.JobWithFrontier();
    // As if the server died right after the new settings were stored, before recomputing.
    ASSERT_TRUE(r.store->PutPlanner(id, R"({"num_microbatches":6})").ok());
  }
  Registry again(dir.path());
  json status = again.Ok(again.registry->FrontierStatus(id));
  EXPECT_NE(status["state"], "ready");  // computing (or already done: then with 6 microbatches)
  json done = again.FrontierWhenDone(id);
  EXPECT_EQ(done["state"], "ready");
  EXPECT_EQ(again.Ok(again.registry->GetJob(id))["planner"]["num_microbatches"], 6);
}

TEST(JobRegistry, ANewerStateDocumentQuarantinesOnlyItsJob) {
  TempDir dir("newer");
  std::string bad;
  std::string good;
  {
    Registry r(dir.path());
    good = r.JobWithFrontier();
    bad = r.JobWithFrontier();
    ASSERT_TRUE(r.store->PutState(bad, R"({"schema_version":9,"round":0})").ok());
  }
  Registry again(dir.path());
  Answer missing = again.registry->GetJob(bad);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kCorruption);
  EXPECT_NE(missing.error().message.find("schema_version 9 is newer than this server reads"), std::string::npos)
      << missing.error().message;
  EXPECT_EQ(again.Ok(again.registry->FrontierStatus(good))["state"], "ready");
}

}  // namespace
}  // namespace wattcut::server
