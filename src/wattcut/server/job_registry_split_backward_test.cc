// A zero-bubble (ZB-H1) job whose ranks measured their backward split into B and W: the
// registry plans the measured ratio (here 40:60), not halves of the backward, whether the
// ranks upload their profiles or the server's profiling sweep measures them, and the split
// survives a restart (the store's rank profiles).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "wattcut/plan/planner.h"
#include "wattcut/server/job_registry.h"
#include "wattcut/server/registry_harness_testing.h"

namespace wattcut::server {
namespace {

using nlohmann::json;

constexpr int kZeroBubbleJobStages = 2;
constexpr int kZeroBubbleJobMicrobatches = 4;
constexpr double kInputShare = 0.4;  // B's share of the backward; W has the rest

using testing::TempDir;

struct ZeroBubbleJobHarness : testing::RegistryHarness {
  using RegistryHarness::RegistryHarness;
  // A pp = kZeroBubbleJobStages ZB-H1 job and its ranks (rank = pp_rank).
  std::string ZeroBubbleJob() {
    JobRegistration reg;
    reg.info.pp_degree = kZeroBubbleJobStages;
    reg.info.world_size = kZeroBubbleJobStages;
    PlannerSettings planner;
    planner.num_microbatches = kZeroBubbleJobMicrobatches;
    planner.schedule = PipelineScheduleKind::kZeroBubbleH1;
    reg.planner = planner;
    std::string id = Ok(registry->RegisterJob(reg)).get<std::string>();
    for (int p = 0; p < kZeroBubbleJobStages; ++p)
      Ok(registry->RegisterRank(id, RankInfo{p, 0, p, 0, {1410, 1200, 900}}));
    return id;
  }
};

// Stage s's forward and whole backward at f MHz (slower and cheaper at lower clocks).
double ForwardTime(int s, int f) { return (0.010 + 0.002 * s) * 1410 / f; }
double ForwardEnergy(int s, int f) { return 2.0 + 0.1 * s + f / 1000.0; }
double BackwardTime(int s, int f) { return (0.020 + 0.003 * s) * 1410 / f; }
double BackwardEnergy(int s, int f) { return 4.0 + 0.2 * s + f / 500.0; }

// The profile the planner should plan: forward, B and W at kInputShare of the backward.
Profile MeasuredProfile() {
  Profile profile(kZeroBubbleJobStages);
  for (int s = 0; s < kZeroBubbleJobStages; ++s) {
    for (int f : {1410, 1200, 900}) {
      const double bt = BackwardTime(s, f), be = BackwardEnergy(s, f);
      profile.mutable_measurements(s, InstructionKind::kForward)
          .push_back(Measurement{f, ForwardTime(s, f), ForwardEnergy(s, f)});
      profile.mutable_measurements(s, InstructionKind::kBackward).push_back(Measurement{f, bt, be});
      profile.mutable_measurements(s, InstructionKind::kBackwardInput)
          .push_back(Measurement{f, kInputShare * bt, kInputShare * be});
      profile.mutable_measurements(s, InstructionKind::kBackwardWeight)
          .push_back(Measurement{f, (1 - kInputShare) * bt, (1 - kInputShare) * be});
    }
  }
  return profile;
}

PlannerOptions Options() {
  PlannerSettings settings;
  settings.num_microbatches = kZeroBubbleJobMicrobatches;
  settings.schedule = PipelineScheduleKind::kZeroBubbleH1;
  return settings.ToPlannerOptions();
}

// The (time_s, energy_j) of every point, slowest first, as FrontierPoints answers them.
std::vector<std::pair<double, double>> PointsOf(const json& answer) {
  std::vector<std::pair<double, double>> out;
  for (const json& p : answer["points"]) out.emplace_back(p["time_s"].get<double>(), p["energy_j"].get<double>());
  return out;
}
std::vector<std::pair<double, double>> PointsOf(const Frontier& frontier) {
  std::vector<std::pair<double, double>> out;
  for (const FrontierPoint& p : frontier.points()) out.emplace_back(p.time_s, p.energy_j);
  return out;
}

// The frontier of the measured 40:60 profile, and checks that it differs from the one a
// whole-backward profile gets (halves): the test would not tell them apart otherwise.
std::vector<std::pair<double, double>> ExpectedPoints() {
  const Profile measured = MeasuredProfile();
  Result<Frontier> expected = ComputeFrontierFromDeviceProfile(measured, Options());
  EXPECT_TRUE(expected.ok()) << expected.error().message;
  Profile whole(kZeroBubbleJobStages);
  for (int s = 0; s < kZeroBubbleJobStages; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      whole.mutable_measurements(s, kind) = measured.measurements(s, kind);
    }
  }
  Result<Frontier> halves = ComputeFrontierFromDeviceProfile(whole, Options());
  EXPECT_TRUE(halves.ok()) << halves.error().message;
  if (!expected.ok() || !halves.ok()) return {};
  EXPECT_NE(PointsOf(*expected), PointsOf(*halves)) << "40:60 and 50:50 plan alike; the test shows nothing";
  return PointsOf(*expected);
}

TEST(JobRegistrySplitBackward, UploadedRankProfilesKeepTheMeasuredSplitAcrossARestart) {
  const auto expected = ExpectedPoints();
  ASSERT_FALSE(expected.empty());
  TempDir dir("upload");
  std::string id;
  {
    ZeroBubbleJobHarness r(dir.path());
    id = r.ZeroBubbleJob();
    for (int s = 0; s < kZeroBubbleJobStages; ++s) {
      RankProfile p;
      p.rank = s;
      p.pp_rank = s;
      for (int f : {1410, 1200, 900}) {
        p.forward_time[f] = ForwardTime(s, f);
        p.forward_energy[f] = ForwardEnergy(s, f);
        p.backward_input_time[f] = kInputShare * BackwardTime(s, f);
        p.backward_input_energy[f] = kInputShare * BackwardEnergy(s, f);
        p.backward_weight_time[f] = (1 - kInputShare) * BackwardTime(s, f);
        p.backward_weight_energy[f] = (1 - kInputShare) * BackwardEnergy(s, f);
      }
      r.Ok(r.registry->UploadRankProfile(id, p));
    }
    ASSERT_EQ(r.FrontierWhenDone(id)["state"], "ready");
    EXPECT_EQ(PointsOf(r.Ok(r.registry->FrontierPoints(id, 0, 100000))), expected);
  }
  ZeroBubbleJobHarness again(dir.path());
  ASSERT_EQ(again.FrontierWhenDone(id)["state"], "ready");
  EXPECT_EQ(PointsOf(again.Ok(again.registry->FrontierPoints(id, 0, 100000))), expected);
  // The stored rank profiles are what the job's profile is rebuilt from: a last upload
  // replaces one rank's profile with itself and the job replans the same split.
  RankProfile same;
  same.rank = 1;
  same.pp_rank = 1;
  for (int f : {1410, 1200, 900}) {
    same.forward_time[f] = ForwardTime(1, f);
    same.forward_energy[f] = ForwardEnergy(1, f);
    same.backward_input_time[f] = kInputShare * BackwardTime(1, f);
    same.backward_input_energy[f] = kInputShare * BackwardEnergy(1, f);
    same.backward_weight_time[f] = (1 - kInputShare) * BackwardTime(1, f);
    same.backward_weight_energy[f] = (1 - kInputShare) * BackwardEnergy(1, f);
  }
  again.Ok(again.registry->UploadRankProfile(id, same));
  ASSERT_EQ(again.FrontierWhenDone(id)["state"], "ready");
  EXPECT_EQ(PointsOf(again.Ok(again.registry->FrontierPoints(id, 0, 100000))), expected);
}

TEST(JobRegistrySplitBackward, TheProfilingSweepKeepsTheMeasuredSplit) {
  const auto expected = ExpectedPoints();
  ASSERT_FALSE(expected.empty());
  TempDir dir("sweep");
  ZeroBubbleJobHarness r(dir.path());
  std::string id = r.ZeroBubbleJob();
  // Each round: every rank asks for its schedule (the sweep's frequency), then reports
  // its B and W passes (two microbatches' worth each) at that frequency.
  for (int f : {1410, 1200, 900}) {
    std::vector<std::thread> ranks;
    for (int s = 0; s < kZeroBubbleJobStages; ++s) {
      ranks.emplace_back([&, s] { r.Ok(r.registry->FetchSchedule(id, s)); });
    }
    for (std::thread& t : ranks) t.join();
    for (int s = 0; s < kZeroBubbleJobStages; ++s) {
      ProfilingResult result;
      result.rank = s;
      const double bit = kInputShare * BackwardTime(s, f), bwt = (1 - kInputShare) * BackwardTime(s, f);
      const double bie = kInputShare * BackwardEnergy(s, f), bwe = (1 - kInputShare) * BackwardEnergy(s, f);
      result.time_breakdown = {{"forward", {{ForwardTime(s, f), ForwardTime(s, f)}}},
                               {"backward_input", {{bit, bit}}},
                               {"backward_weight", {{bwt, bwt}}}};
      result.energy_breakdown = {{"forward", {{ForwardEnergy(s, f), ForwardEnergy(s, f)}}},
                                 {"backward_input", {{bie, bie}}},
                                 {"backward_weight", {{bwe, bwe}}}};
      r.Ok(r.registry->PostResult(id, result));
    }
  }
  json job = r.Ok(r.registry->GetJob(id));
  EXPECT_EQ(job["profile_source"], "server_profiling") << job.dump();
  ASSERT_EQ(r.FrontierWhenDone(id)["state"], "ready");
  // The sweep's means of two equal values are the values themselves: the same frontier.
  EXPECT_EQ(PointsOf(r.Ok(r.registry->FrontierPoints(id, 0, 100000))), expected);
}

}  // namespace
}  // namespace wattcut::server
