// Job::Commit's contract, through the registry over a real store: a change the store refuses
// answers kIOError and leaves the job exactly as it was, in memory (every view of it) and in the
// store (every row), for every kind of change; once the store works again the same change goes
// through (so it was the store, not the change, that refused).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/server/job.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/job_state_codec.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;
using testing::RegisterJobOfTwoPipelines;
using testing::RegistryHarness;
using testing::StoredRows;
using testing::StoreFault;
using testing::TempDir;

// Everything a client can see of job `id`.
std::string Views(RegistryHarness& r, const std::string& id) {
  std::string out;
  for (const Answer& a : {r.registry->GetJob(id), r.registry->FrontierStatus(id), r.registry->ListStragglers(id),
                          r.registry->GetPowerTarget(id), r.registry->GetDeadlineSchedule(id)}) {
    out += (a.ok() ? *a : "error: " + a.error().message) + "\n";
  }
  for (int rank = 0; rank < 4; ++rank) {
    const Answer preview = r.registry->PreviewSchedule(id, rank);
    out += (preview.ok() ? *preview : "error: " + preview.error().message) + "\n";
  }
  return out;
}

RankProfile ProfileOfRank(int rank) {
  RankProfile p;
  p.rank = rank;
  p.dp_rank = rank / 2;
  p.pp_rank = rank % 2;
  for (int f : {1410, 1200, 900}) {
    p.forward_time[f] = 0.01 * 1410 / f;
    p.forward_energy[f] = 2.0 + f / 1000.0;
    p.backward_time[f] = 0.02 * 1410 / f;
    p.backward_energy[f] = 4.0 + f / 500.0;
  }
  return p;
}

struct Change {
  const char* kind;
  std::function<Answer(JobRegistry&, const std::string&)> apply;
};

TEST(JobCommit, AChangeTheStoreRefusesLeavesTheJobExactlyAsItWas) {
  TempDir temp("job_commit");
  // A clock that stands still: the views that count time (a deadline's expected iterations) are
  // the same when nothing changed.
  ManualClock clock(UnixNowS());
  JobRegistry::Options options;
  options.wall_clock = &clock;
  RegistryHarness r(temp.path(), options);
  StoreFault fault(temp.path());
  // A job with some of everything: two of its four ranks registered, a frontier, a target.
  const std::string id = RegisterJobOfTwoPipelines(r, /*ranks=*/2);
  PlannerSettings planner;
  planner.num_microbatches = 4;
  r.Ok(r.registry->UploadProfile(id, ProfileUpload{testing::SmallProfileCsv(), std::nullopt}));
  ASSERT_EQ(r.FrontierWhenDone(id)["state"], "ready");

  PlannerSettings other = planner;
  other.num_microbatches = 8;
  PowerTarget target{PowerTarget::Kind::kAverage, 100, "row 3", 600, 0};
  DeadlineScheduleSpec deadline;
  deadline.iterations = 1000;
  deadline.deadline = FormatTimestamp(clock.NowS() + 7200);
  ProfilingResult result;
  result.rank = 0;
  result.iter_time = {1.0};
  result.iter_energy = {100.0};
  const std::vector<Change> changes = {
      {"register a rank",
       [](JobRegistry& g, const std::string& j) {
         return g.RegisterRank(j, RankInfo{2, 1, 0, 0, {1410, 1200, 900}});
       }},
      {"a rank's profile",
       [](JobRegistry& g, const std::string& j) { return g.UploadRankProfile(j, ProfileOfRank(0)); }},
      {"a profiling result", [&](JobRegistry& g, const std::string& j) { return g.PostResult(j, result); }},
      {"planner settings", [&](JobRegistry& g, const std::string& j) { return g.SetPlanner(j, other); }},
      {"a profile",
       [](JobRegistry& g, const std::string& j) {
         return g.UploadProfile(j, ProfileUpload{testing::SmallProfileCsv(), std::nullopt});
       }},
      {"a profile with planner settings",
       [&](JobRegistry& g, const std::string& j) {
         return g.UploadProfile(j, ProfileUpload{testing::SmallProfileCsv(), other});
       }},
      {"the plan selection",
       [](JobRegistry& g, const std::string& j) {
         return g.SelectPlan(j, PlanSelection{PlanSelection::Kind::kMinEnergy, 0});
       }},
      {"a straggler",
       [](JobRegistry& g, const std::string& j) {
         return g.ReportStraggler(j, StragglerReport{1, StragglerReport::Kind::kSlowdown, 1.2});
       }},
      {"a power target", [&](JobRegistry& g, const std::string& j) { return g.SetPowerTarget(j, target); }},
      {"a deadline schedule", [&](JobRegistry& g, const std::string& j) { return g.SetDeadlineSchedule(j, deadline); }},
      {"a node's measured GPU energy",
       [](JobRegistry& g, const std::string& j) {
         return g.ReportMeasuredGpuEnergy(j, "gpu-017", NodeGpuEnergy{12345.6, 34.5, {0, 1}, "slurm-epilog"});
       }},
      {"the node's measured GPU energy again (an epilog retried)",
       [](JobRegistry& g, const std::string& j) {
         return g.ReportMeasuredGpuEnergy(j, "gpu-017", NodeGpuEnergy{12400, 35, {0, 1}, "slurm-epilog"});
       }},
      // What the ones above set, cleared; then the job itself.
      {"clearing the power target", [](JobRegistry& g, const std::string& j) { return g.ClearPowerTarget(j); }},
      {"clearing the deadline schedule",
       [](JobRegistry& g, const std::string& j) { return g.ClearDeadlineSchedule(j); }},
      {"a straggler's recovery",
       [](JobRegistry& g, const std::string& j) {
         return g.ReportStraggler(j, StragglerReport{1, StragglerReport::Kind::kRecovered, 0});
       }},
      {"deleting the job", [](JobRegistry& g, const std::string& j) { return g.DeleteJob(j); }},
  };
  // Each change refused with the store failing, then made with the store back (so that it was
  // the store, not the change, that refused; and the next change starts from it).
  for (const Change& change : changes) {
    SCOPED_TRACE(change.kind);
    const std::string views = Views(r, id);
    const std::string rows = StoredRows(*r.store, id);
    fault.On();
    const Answer refused = change.apply(*r.registry, id);
    fault.Off();
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::kIOError) << refused.error().message;
    EXPECT_NE(refused.error().message.find("could not persist the change, nothing was changed"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(Views(r, id), views);
    EXPECT_EQ(StoredRows(*r.store, id), rows);
    const Answer applied = change.apply(*r.registry, id);
    ASSERT_TRUE(applied.ok()) << applied.error().message;
    EXPECT_NE(StoredRows(*r.store, id), rows);
    if (std::string(change.kind) != "deleting the job") r.FrontierWhenDone(id);
  }
  EXPECT_EQ(StoredRows(*r.store, id), "(no such job)");
}

// A sweep step's measurement is stored with the sweep's progress in one transaction: refused (the
// result row itself stored), the sweep has not moved and the rank profile is not there.
TEST(JobCommit, ARefusedSweepMeasurementMovesNothing) {
  TempDir temp("job_commit_sweep");
  RegistryHarness r(temp.path());
  StoreFault fault(temp.path());
  const std::string id = testing::RegisterOneRankJob(r);
  r.Ok(r.registry->FetchSchedule(id, 0));  // the first round starts the sweep at 1410 MHz
  ProfilingResult measured;
  measured.iter_time = {1.0};
  measured.iter_energy = {200.0};
  measured.time_breakdown = {{"forward", {{0.1, 0.1}}}, {"backward", {{0.2, 0.2}}}};
  measured.energy_breakdown = {{"forward", {{20, 20}}}, {"backward", {{40, 40}}}};
  const json state = r.Ok(r.registry->GetJob(id))["state"];
  fault.On({"rank_profiles"});
  const Answer refused = r.registry->PostResult(id, measured);
  fault.Off();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kIOError) << refused.error().message;
  const json job = r.Ok(r.registry->GetJob(id));
  EXPECT_EQ(job["state"], state);
  EXPECT_EQ(job["rank_profiles"], 0);
  EXPECT_EQ(job["ranks_with_results"], 1);  // the result row is a change of its own
  // Again with the store back: the step is recorded.
  r.Ok(r.registry->PostResult(id, measured));
  const json after = r.Ok(r.registry->GetJob(id));
  EXPECT_EQ(after["state"]["profiling"]["step"], 1);
  EXPECT_EQ(after["rank_profiles"], 1);
}

// Job `id` as a restart builds it: read back from the store.
std::unique_ptr<Job> RestoredJob(JobStore& store, const std::string& id) {
  auto all = store.LoadAll();
  EXPECT_TRUE(all.ok()) << all.error().message;
  for (const StoredJob& stored : all.ok() ? *all : std::vector<StoredJob>{}) {
    if (stored.job_id != id) continue;
    auto decoded = DecodeStoredJob(stored);
    EXPECT_TRUE(decoded.ok()) << decoded.error().message;
    if (decoded.ok()) return std::make_unique<Job>(store, std::move(*decoded));
  }
  ADD_FAILURE() << "job " << id << " is not stored";
  return nullptr;
}

// The job's stored state document.
std::string StoredState(JobStore& store, const std::string& id) {
  auto all = store.LoadAll();
  EXPECT_TRUE(all.ok()) << all.error().message;
  for (const StoredJob& stored : all.ok() ? *all : std::vector<StoredJob>{}) {
    if (stored.job_id == id) return stored.state_json;
  }
  return "(no such job)";
}

// Each part of the state document, set alone in an edit with a rank's profile (one transaction,
// JobStore::PutRankProfileAndState): the job stores it, applies it (its state is the stored one),
// and a job read back from the store has it. One case per part of StateParts (job_edit.h), so a
// part added there without a case here fails.
TEST(JobCommit, EveryPartOfTheStateIsStoredAppliedAndRestored) {
  TempDir temp("job_commit_parts");
  RegistryHarness r(temp.path());
  const std::string id = RegisterJobOfTwoPipelines(r);
  DeadlineScheduleSpec deadline;
  deadline.iterations = 1000;
  deadline.deadline = FormatTimestamp(UnixNowS() + 7200);
  ProfilingSweep::State sweep{true, false, {1410, 1200}, 1, {1, 0, 1, 0}};
  const std::vector<std::pair<const char*, std::function<void(JobEdit&)>>> parts = {
      {"selection",
       [](JobEdit& e) {
         e.selection = PlanSelection{PlanSelection::Kind::kMinEnergy, 0};
       }},
      {"stragglers",
       [](JobEdit& e) {
         e.stragglers = Stragglers{{1, {StragglerReport::Kind::kSlowdown, 1.2}}};
       }},
      {"power_target",
       [](JobEdit& e) {
         e.power_target = PowerTarget{PowerTarget::Kind::kAverage, 100, "row 3", 600, 0};
       }},
      {"deadline",
       [&](JobEdit& e) {
         e.deadline = DeadlineFollowing{deadline, {}, {}, std::nullopt, {}};
       }},
      {"sweep", [&](JobEdit& e) { e.sweep = ProfilingSweep(sweep, 4); }},
      {"frontier_attempts", [](JobEdit& e) { e.frontier_attempts = 2; }},
      {"deployment",
       [](JobEdit& e) {
         e.deployment = Deployment{7, 1200, {}};
       }},
      {"measured_gpu_energy",
       [](JobEdit& e) {
         e.measured_gpu_energy = MeasuredGpuEnergy{{"gpu-017", NodeGpuEnergy{12345.6, 34.5, {0, 1}, "slurm-epilog"}}};
       }},
      {"complete_round", [](JobEdit& e) { e.complete_round = true; }},
  };
  JobEdit any;
  ASSERT_EQ(parts.size(), std::tuple_size_v<decltype(StateParts(any))>);
  for (const auto& [name, set] : parts) {
    SCOPED_TRACE(name);
    std::unique_ptr<Job> job = RestoredJob(*r.store, id);
    ASSERT_NE(job, nullptr);
    MutexLock lock(job->mu());
    const std::string before = EncodeJobState(job->State());
    JobEdit edit;
    edit.rank_profile = ProfileOfRank(0);
    set(edit);
    ASSERT_TRUE(edit.has_state_parts());
    ASSERT_TRUE(job->Commit(std::move(edit)));
    const std::string stored = StoredState(*r.store, id);
    EXPECT_NE(stored, before);                        // stored
    EXPECT_EQ(EncodeJobState(job->State()), stored);  // applied as stored
    std::unique_ptr<Job> restored = RestoredJob(*r.store, id);
    ASSERT_NE(restored, nullptr);
    MutexLock restored_lock(restored->mu());
    EXPECT_EQ(EncodeJobState(restored->State()), stored);  // restored
  }
}

}  // namespace
}  // namespace wattcut::server
