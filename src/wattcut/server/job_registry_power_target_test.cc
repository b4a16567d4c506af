// The registry's power targets (PUT/DELETE/GET /v1/jobs/{id}/power_target) over a real
// JobStore, without a server process: the point a peak or average target gives, how it
// combines with the plan selection and a straggler, a target no plan meets, one set before the
// frontier is ready, clearing it, and a restart.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/base/unix_time.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"
#include "wattcut/server/registry_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;
using testing::RegistryHarness;
using testing::TempDir;

using testing::kTwoPipelineJobStages;
using testing::PlanIndexOf;
using testing::RegisterJobOfTwoPipelines;

void UploadProfile(RegistryHarness& r, const std::string& id) {
  ProfileUpload upload;
  upload.csv = testing::SmallProfileCsv(kTwoPipelineJobStages);
  r.Ok(r.registry->UploadProfile(id, upload));
  ASSERT_EQ(r.FrontierWhenDone(id)["state"], "ready");
}

// Each point's powers per GPU, as GET /v1/jobs/{id}/frontier/points shows them.
struct PointPowers {
  std::vector<double> avg_per_gpu_w;
  std::vector<double> peak_per_gpu_w;
  size_t size() const { return avg_per_gpu_w.size(); }
};
PointPowers Powers(RegistryHarness& r, const std::string& id) {
  PointPowers out;
  json points = r.Ok(r.registry->FrontierPoints(id, 0, 10000))["points"];
  for (const json& p : points) {
    out.avg_per_gpu_w.push_back(p["avg_power_per_gpu_w"].get<double>());
    out.peak_per_gpu_w.push_back(p["peak_1s_power_w"].get<double>() / kTwoPipelineJobStages);
  }
  return out;
}

// The fastest index whose power is <= watts (points run slowest -> fastest); -1 when none.
int FastestAtOrBelow(const std::vector<double>& powers, double watts) {
  for (size_t i = powers.size(); i-- > 0;) {
    if (powers[i] <= watts) return static_cast<int>(i);
  }
  return -1;
}

TEST(JobRegistryPowerTarget, APeakOrAverageTargetDeploysTheFastestPlanAtOrBelowItToEveryRank) {
  TempDir temp("power_target_point");
  RegistryHarness r(temp.path());
  std::string id = RegisterJobOfTwoPipelines(r);
  UploadProfile(r, id);
  const PointPowers powers = Powers(r, id);
  ASSERT_GE(powers.size(), 4u);
  const int fastest = static_cast<int>(powers.size()) - 1;
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), fastest);

  for (PowerTarget::Kind kind : {PowerTarget::Kind::kPeak1s, PowerTarget::Kind::kAverage}) {
    const auto& of_kind = kind == PowerTarget::Kind::kPeak1s ? powers.peak_per_gpu_w : powers.avg_per_gpu_w;
    const double watts = of_kind[powers.size() / 2];
    const int expected = FastestAtOrBelow(of_kind, watts);
    ASSERT_GE(expected, 0);
    ASSERT_LT(expected, fastest) << "the target must slow the job for this test to mean anything";
    r.Ok(r.registry->ClearPowerTarget(id));  // from the fastest plan again
    const uint64_t before = r.Ok(r.registry->FetchDeployment(id, 0, 0, 0))["version"];
    json answer = r.Ok(r.registry->SetPowerTarget(id, PowerTarget{kind, watts, "row 3 over its budget", 0, 0}));
    EXPECT_EQ(answer["applied"], true);
    EXPECT_EQ(answer["met"], true);
    EXPECT_EQ(answer["kind"], kind == PowerTarget::Kind::kPeak1s ? "peak_1s" : "average");
    EXPECT_EQ(answer["point"]["index"], expected);
    EXPECT_LE(answer["point_power_per_gpu_w"].get<double>(), watts);
    EXPECT_EQ(answer["power_target"]["reason"], "row 3 over its budget");
    EXPECT_EQ(answer["deployment"]["version"], before + 1);
    EXPECT_EQ(answer["selected"]["index"], fastest);
    for (int rank = 0; rank < 4; ++rank) {
      json d = r.Ok(r.registry->FetchDeployment(id, rank, 0, before));
      EXPECT_EQ(d["version"], before + 1);
      EXPECT_EQ(d["plan_index"], expected) << "rank " << rank;
    }
    EXPECT_EQ(r.Ok(r.registry->GetPowerTarget(id)), answer);
  }
  // The metrics name the job, the kind and whether it is met.
  const std::vector<PowerTargetGauge> gauges = r.registry->PowerTargetGauges();
  ASSERT_EQ(gauges.size(), 1u);
  r.metrics.SetPowerTargets(gauges);
  const std::string text = r.metrics.Render();
  EXPECT_NE(text.find("wattcut_power_target_per_gpu_watts{job_id=\"" + id + "\",kind=\"average\"} "), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattcut_power_target_met{job_id=\"" + id + "\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_power_target_point_per_gpu_watts{job_id=\"" + id + "\",kind=\"average\"} "),
            std::string::npos);
}

TEST(JobRegistryPowerTarget, EveryPipelineRunsTheSlowerOfItsPlanAndTheTargetsAStragglerToo) {
  TempDir temp("power_target_combination");
  RegistryHarness r(temp.path());
  std::string id = RegisterJobOfTwoPipelines(r);
  UploadProfile(r, id);
  const PointPowers powers = Powers(r, id);
  const int fastest = static_cast<int>(powers.size()) - 1;
  const int t_star = r.Ok(r.registry->FrontierStatus(id))["min_energy"]["index"];
  ASSERT_LT(t_star, fastest);

  // Selected T*; a target whose point is faster than T* leaves T*.
  PlanSelection min_energy;
  min_energy.kind = PlanSelection::Kind::kMinEnergy;
  r.Ok(r.registry->SelectPlan(id, min_energy));
  const double above_t_star = powers.avg_per_gpu_w[fastest];
  json answer = r.Ok(r.registry->SetPowerTarget(id, PowerTarget{PowerTarget::Kind::kAverage, above_t_star, "", 0, 0}));
  EXPECT_EQ(answer["point"]["index"], fastest);
  EXPECT_EQ(answer["met"], true);
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), t_star);

  // Back to the fastest, a straggler pipeline (dp 1): the other pipeline gets the plan at the
  // straggler's time, the straggler the selected one; a target between the two holds the
  // straggler to its point and leaves the slower non-straggler plan.
  PlanSelection fastest_selection;
  r.Ok(r.registry->SelectPlan(id, fastest_selection));
  r.Ok(r.registry->ClearPowerTarget(id));
  r.Ok(r.registry->ReportStraggler(id, StragglerReport{1, StragglerReport::Kind::kSlowdown, 1.2}));
  const int non_straggler = PlanIndexOf(r, id, 0);
  EXPECT_EQ(PlanIndexOf(r, id, 2), fastest);
  ASSERT_LT(non_straggler, fastest - 1) << "the test needs a point between the two";
  const int between = (non_straggler + fastest) / 2 + 1;
  ASSERT_GT(between, non_straggler);
  ASSERT_LT(between, fastest);
  // The fastest point whose average power is at or below `between`'s.
  const int cap = FastestAtOrBelow(powers.avg_per_gpu_w, powers.avg_per_gpu_w[between]);
  ASSERT_GE(cap, between);
  ASSERT_LT(cap, fastest);
  answer = r.Ok(r.registry->SetPowerTarget(
      id, PowerTarget{PowerTarget::Kind::kAverage, powers.avg_per_gpu_w[between], "", 0, 0}));
  EXPECT_EQ(answer["point"]["index"], cap);
  EXPECT_EQ(answer["deployment"]["plan_index"], cap);  // the straggler pipeline's
  EXPECT_EQ(answer["deployment"]["non_straggler_plan_index"], std::min(non_straggler, cap));
  for (int rank : {2, 3}) EXPECT_EQ(PlanIndexOf(r, id, rank), cap);
  for (int rank : {0, 1}) EXPECT_EQ(PlanIndexOf(r, id, rank), std::min(non_straggler, cap));
}

TEST(JobRegistryPowerTarget, ATargetNoPlanMeetsDeploysTheLowestPowerPlanAndSaysNotMet) {
  TempDir temp("power_target_not_met");
  RegistryHarness r(temp.path());
  std::string id = RegisterJobOfTwoPipelines(r);
  UploadProfile(r, id);
  const PointPowers powers = Powers(r, id);
  size_t lowest = powers.size() - 1;
  for (size_t i = powers.size(); i-- > 0;) {
    if (powers.peak_per_gpu_w[i] < powers.peak_per_gpu_w[lowest]) lowest = i;
  }
  json answer = r.Ok(r.registry->SetPowerTarget(id, PowerTarget{PowerTarget::Kind::kPeak1s, 1.0, "", 0, 0}));
  EXPECT_EQ(answer["applied"], true);
  EXPECT_EQ(answer["met"], false);
  EXPECT_EQ(answer["point"]["index"], lowest);
  EXPECT_DOUBLE_EQ(answer["lowest_power_per_gpu_w"].get<double>(), powers.peak_per_gpu_w[lowest]);
  EXPECT_NE(answer.value("note", "").find("the lowest is"), std::string::npos) << answer.dump();
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), static_cast<int>(lowest));
  r.metrics.SetPowerTargets(r.registry->PowerTargetGauges());
  const std::string text = r.metrics.Render();
  EXPECT_NE(text.find("wattcut_power_target_met{job_id=\"" + id + "\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattcut_power_target_per_gpu_watts{job_id=\"" + id + "\",kind=\"peak_1s\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(JobRegistryPowerTarget, ATargetSetBeforeTheFrontierIsKeptAndAppliedWhenItIsReady) {
  TempDir temp("power_target_before_frontier");
  RegistryHarness r(temp.path());
  std::string id = RegisterJobOfTwoPipelines(r);
  json answer = r.Ok(r.registry->SetPowerTarget(id, PowerTarget{PowerTarget::Kind::kPeak1s, 1.0, "", 0, 0}));
  EXPECT_EQ(answer["applied"], false);
  EXPECT_EQ(answer["frontier"], "none");
  EXPECT_NE(answer.value("note", "").find("applied when the frontier is ready"), std::string::npos) << answer.dump();
  EXPECT_FALSE(answer.contains("met"));
  // No plan yet: the ranks run AllMax, and the target changes nothing there.
  EXPECT_EQ(r.Ok(r.registry->FetchDeployment(id, 0, 0, 7))["mode"], "all_max");  // 7: not the version it has
  r.metrics.SetPowerTargets(r.registry->PowerTargetGauges());
  EXPECT_NE(r.metrics.Render().find("wattcut_power_target_met{job_id=\"" + id + "\"} 0\n"), std::string::npos);

  UploadProfile(r, id);
  const PointPowers powers = Powers(r, id);
  size_t lowest = powers.size() - 1;
  for (size_t i = powers.size(); i-- > 0;) {
    if (powers.peak_per_gpu_w[i] < powers.peak_per_gpu_w[lowest]) lowest = i;
  }
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), static_cast<int>(lowest));
  answer = r.Ok(r.registry->GetPowerTarget(id));
  EXPECT_EQ(answer["applied"], true);
  EXPECT_EQ(answer["met"], false);
}

TEST(JobRegistryPowerTarget, ClearingBringsTheSelectedPlanBackAndARestartKeepsTheTarget) {
  TempDir temp("power_target_clear_restart");
  std::string id;
  uint64_t version = 0;
  int capped = 0;
  int fastest = 0;
  PowerTarget target{PowerTarget::Kind::kAverage, 0, "budget", 0, 0};
  {
    RegistryHarness r(temp.path());
    id = RegisterJobOfTwoPipelines(r);
    UploadProfile(r, id);
    const PointPowers powers = Powers(r, id);
    fastest = static_cast<int>(powers.size()) - 1;
    version = r.Ok(r.registry->FetchDeployment(id, 0, 0, 0))["version"];
    // Every rank has run 20 steps: a change applies after them.
    for (int rank = 0; rank < 4; ++rank) r.Ok(r.registry->FetchDeployment(id, rank, 20, version));
    target.per_gpu_w = powers.avg_per_gpu_w[powers.size() / 3];
    capped = FastestAtOrBelow(powers.avg_per_gpu_w, target.per_gpu_w);
    ASSERT_LT(capped, fastest);
    json set = r.Ok(r.registry->SetPowerTarget(id, target));
    EXPECT_EQ(set["deployment"]["version"], version + 1);
    EXPECT_EQ(set["deployment"]["apply_from_step"], 21);
    EXPECT_EQ(set["deployment"]["ranks_min_step"], 20);
    EXPECT_EQ(set["deployment"]["every_rank_past_apply_step"], false);
    for (int rank = 0; rank < 4; ++rank) {
      json d = r.Ok(r.registry->FetchDeployment(id, rank, 20, version));
      EXPECT_EQ(d["apply_from_step"], 21);
      EXPECT_EQ(d["plan_index"], capped);
    }
    // Every rank but one has run the apply step: not yet; then all have.
    for (int rank = 0; rank < 3; ++rank) r.Ok(r.registry->FetchDeployment(id, rank, 22, version + 1));
    EXPECT_EQ(r.Ok(r.registry->GetPowerTarget(id))["deployment"]["every_rank_past_apply_step"], false);
    r.Ok(r.registry->FetchDeployment(id, 3, 22, version + 1));
    json switched = r.Ok(r.registry->GetPowerTarget(id));
    EXPECT_EQ(switched["deployment"]["ranks_min_step"], 22);
    EXPECT_EQ(switched["deployment"]["every_rank_past_apply_step"], true);
    json cleared = r.Ok(r.registry->ClearPowerTarget(id));
    EXPECT_TRUE(cleared["power_target"].is_null());
    EXPECT_EQ(cleared["deployment"]["version"], version + 2);
    for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(PlanIndexOf(r, id, rank), fastest);
    EXPECT_TRUE(r.registry->PowerTargetGauges().empty());
    // Clearing again changes nothing and is no error.
    EXPECT_EQ(r.Ok(r.registry->ClearPowerTarget(id))["deployment"]["version"], version + 2);
    r.Ok(r.registry->SetPowerTarget(id, target));
    version += 3;
  }
  // After a restart: the same target, the same version (nothing new to a rank that has it), and
  // a restarted rank gets the capped plan.
  RegistryHarness again(temp.path());
  json got = again.Ok(again.registry->GetPowerTarget(id));
  EXPECT_EQ(got["power_target"], target.ToJson());
  EXPECT_EQ(got["deployment"]["version"], version);
  EXPECT_EQ(got["point"]["index"], capped);
  EXPECT_EQ(again.Ok(again.registry->FetchDeployment(id, 1, 30, version)),
            (json{{"version", version}, {"poll_interval_s", 0.5}}));
  EXPECT_EQ(PlanIndexOf(again, id, 3), capped);
  EXPECT_EQ(again.Ok(again.registry->GetJob(id))["state"]["power_target"], target.ToJson());
  again.Ok(again.registry->ClearPowerTarget(id));
  EXPECT_EQ(PlanIndexOf(again, id, 3), fastest);
  EXPECT_EQ(again.registry->SetPowerTarget("nope", target).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(again.registry->GetPowerTarget("nope").error().code, ErrorCode::kNotFound);
}

// A target with a lease lapses unless it is set again (a row controller renews it as it renews
// its ceilings): the ranks get the selected plan back, as after a DELETE; the expiry is stored.
TEST(JobRegistryPowerTarget, ATargetsLeaseRunsOutUnlessItIsSetAgain) {
  TempDir temp("power_target_lease");
  std::string id;
  int fastest = 0;
  int capped = 0;
  {
    // The registry's wall clock, stepped by the test: the lapse timer runs as it passes each
    // second.
    ManualClock clock(UnixNowS());
    JobRegistry::Options options;
    options.wall_clock = &clock;
    RegistryHarness r(temp.path(), options);
    id = RegisterJobOfTwoPipelines(r);
    UploadProfile(r, id);
    const PointPowers powers = Powers(r, id);
    fastest = static_cast<int>(powers.size()) - 1;
    PowerTarget target{PowerTarget::Kind::kAverage, powers.avg_per_gpu_w[powers.size() / 3], "row 1", 3600, 0};
    capped = FastestAtOrBelow(powers.avg_per_gpu_w, target.per_gpu_w);
    ASSERT_LT(capped, fastest);
    const double before_s = clock.NowS();
    json set = r.Ok(r.registry->SetPowerTarget(id, target));
    EXPECT_EQ(set["power_target"]["lease_s"], 3600);
    EXPECT_GE(set["power_target"]["expires_at_unix_s"].get<double>(), before_s + 3600);
    EXPECT_EQ(PlanIndexOf(r, id, 0), capped);
    // Set again with a 1-s lease: it runs out and nobody renews it.
    target.lease_s = 1;
    r.Ok(r.registry->SetPowerTarget(id, target));
    clock.AdvanceS(1.5);
    json got = r.Ok(r.registry->GetPowerTarget(id));
    EXPECT_TRUE(got["power_target"].is_null()) << got.dump();
    EXPECT_EQ(PlanIndexOf(r, id, 0), fastest) << "the selected plan again";
    EXPECT_TRUE(r.registry->PowerTargetGauges().empty());
    // One that has not run out yet is stored with its expiry.
    target.lease_s = 3600;
    r.Ok(r.registry->SetPowerTarget(id, target));
  }
  RegistryHarness again(temp.path());
  json got = again.Ok(again.registry->GetPowerTarget(id));
  EXPECT_EQ(got["power_target"]["lease_s"], 3600);
  EXPECT_EQ(PlanIndexOf(again, id, 2), capped);
}

}  // namespace
}  // namespace wattcut::server
