// Reads never write: the status page, GET of a job and of its power target, /metrics and the
// listings, called after a power target's lease ran out, leave the stored job byte-identical; the
// lease lapses on the registry's timer (or at the job's next write).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/clock.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;
using testing::RegisterJobOfTwoPipelines;
using testing::RegistryHarness;
using testing::StoredRows;
using testing::TempDir;

// Every read the server's pages and scrapes make.
void ReadEverything(RegistryHarness& r, const std::string& id) {
  ServerStatusView status;
  r.registry->FillStatusView(status, 10);
  EXPECT_EQ(status.jobs.size(), 1u);
  (void)r.registry->PowerTargetGauges();
  (void)r.registry->CountJobStates();
  r.Ok(r.registry->ListJobs());
  r.Ok(r.registry->GetJob(id));
  r.Ok(r.registry->GetPowerTarget(id));
  r.Ok(r.registry->FrontierStatus(id));
  r.Ok(r.registry->FrontierPoints(id, 0, 10));
  r.Ok(r.registry->ListStragglers(id));
  r.Ok(r.registry->PreviewSchedule(id, 0));
}

// A job of two pipelines with its frontier, and a power target with a 10-s lease set at the
// clock's now.
std::string JobWithLeasedTarget(RegistryHarness& r) {
  const std::string id = RegisterJobOfTwoPipelines(r);
  r.Ok(r.registry->UploadProfile(id, ProfileUpload{testing::SmallProfileCsv(), std::nullopt}));
  EXPECT_EQ(r.FrontierWhenDone(id)["state"], "ready");
  r.Ok(r.registry->SetPowerTarget(id, PowerTarget{PowerTarget::Kind::kAverage, 100, "row 7", 10, 0}));
  return id;
}

TEST(JobRegistryReads, AReadAfterALeaseRanOutChangesNothingUntilTheTimerRuns) {
  TempDir temp("reads_change_nothing");
  ManualClock clock(UnixNowS());
  JobRegistry::Options options;
  options.wall_clock = &clock;
  options.lapse_check_interval_s = 60;  // the first check 60 s after the start
  RegistryHarness r(temp.path(), options);
  const std::string id = JobWithLeasedTarget(r);
  const std::string rows = StoredRows(*r.store, id);
  ReadEverything(r, id);
  EXPECT_EQ(StoredRows(*r.store, id), rows);

  clock.AdvanceS(15);  // the lease ran out 5 s ago; the timer has not run
  ReadEverything(r, id);
  ReadEverything(r, id);
  EXPECT_EQ(StoredRows(*r.store, id), rows) << "a read lapsed the lease";
  EXPECT_FALSE(r.Ok(r.registry->GetPowerTarget(id))["power_target"].is_null());
  EXPECT_EQ(r.registry->PowerTargetGauges().size(), 1u);

  clock.AdvanceS(50);  // past the timer's first check
  EXPECT_NE(StoredRows(*r.store, id), rows);
  EXPECT_TRUE(r.Ok(r.registry->GetJob(id))["state"]["power_target"].is_null());
  EXPECT_TRUE(r.registry->PowerTargetGauges().empty());
}

TEST(JobRegistryReads, AWriteOfTheJobLapsesTheLeaseBeforeTheTimer) {
  TempDir temp("reads_next_write");
  ManualClock clock(UnixNowS());
  JobRegistry::Options options;
  options.wall_clock = &clock;
  options.lapse_check_interval_s = 3600;
  RegistryHarness r(temp.path(), options);
  const std::string id = JobWithLeasedTarget(r);
  clock.AdvanceS(11);
  EXPECT_FALSE(r.Ok(r.registry->GetJob(id))["state"]["power_target"].is_null());
  // A rank's deployment poll is a write: the target goes first, and the poll gets the plan
  // without it.
  r.Ok(r.registry->FetchDeployment(id, 0, 0, 0));
  EXPECT_TRUE(r.Ok(r.registry->GetJob(id))["state"]["power_target"].is_null());
}

}  // namespace
}  // namespace wattcut::server
