// The interleaved and ZB-H1 schedules through the planning server: a job's planner settings
// name the schedule (and its virtual stages), the job's profile stays one stage per pp rank,
// and each rank's schedule carries its device's computations with their instruction names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/plan/planner.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

// The stages of the jobs whose schedules these tests check.
constexpr int kScheduledJobStages = 2;

// Registers a pp_degree x 1 x 1 job with these planner settings and its ranks.
std::string RegisterJobAndRanks(httplib::Client& c, const json& planner) {
  auto job = Post(c, "/register_job",
                  {{"pp_degree", kScheduledJobStages},
                   {"dp_degree", 1},
                   {"tp_degree", 1},
                   {"world_size", kScheduledJobStages},
                   {"planner", planner}});
  EXPECT_EQ(job.status, 200) << job.text;
  std::string id = job.body.is_string() ? job.body.get<std::string>() : "";
  for (int p = 0; p < kScheduledJobStages; ++p) {
    auto r = Post(
        c, "/register_rank/" + id,
        {{"rank", p}, {"dp_rank", 0}, {"pp_rank", p}, {"tp_rank", 0}, {"available_frequencies", TestFrequencies()}});
    EXPECT_EQ(r.status, 200) << r.text;
  }
  return id;
}

// Each rank's next schedule, asked without waiting for a round, is its stage of `expected`'s
// fastest plan.
void ExpectRanksServedTheFastestPlan(httplib::Client& c, const std::string& id, const Frontier& expected) {
  for (int rank = 0; rank < kScheduledJobStages; ++rank) {
    auto reply = Get(c, "/v1/jobs/" + id + "/schedule?rank=" + std::to_string(rank));
    ASSERT_EQ(reply.status, 200) << reply.text;
    EXPECT_EQ(reply.body["frequencies"].dump(), StageScheduleJson(expected, expected.fastest_index(), rank))
        << "rank " << rank;
  }
}

// Uploads the test profile, waits for the frontier, and checks each rank's first schedule
// against the frontier the planner computes for `options` from the per-device profile.
void ExpectFastestSchedules(httplib::Client& c, const std::string& id, const PlannerOptions& options) {
  auto upload = Put(c, "/v1/jobs/" + id + "/profile", {{"csv", TestProfileCsv(kScheduledJobStages)}});
  ASSERT_EQ(upload.status, 202) << upload.text;
  json status = WaitForFrontier(c, id);
  ASSERT_EQ(status["state"], "ready") << status.dump();
  Result<Profile> profile = ParseProfileCsv(TestProfileCsv(kScheduledJobStages), "test profile", kScheduledJobStages);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  Result<Frontier> expected = ComputeFrontierFromDeviceProfile(*profile, options);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  ASSERT_EQ(status["num_points"].get<size_t>(), expected->points().size());
  ExpectRanksServedTheFastestPlan(c, id, *expected);
}

TEST(ServerSchedules, ZeroBubbleRanksGetTheirBAndWPasses) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  PlannerOptions options = TestPlannerOptions(4);
  options.schedule = PipelineScheduleKind::kZeroBubbleH1;
  std::string id =
      RegisterJobAndRanks(*c, {{"num_microbatches", 4}, {"p2p_power_w", options.p2p_power_w}, {"schedule", "zb-h1"}});
  ExpectFastestSchedules(*c, id, options);
  // Rank 1 (the last stage) delays its W passes by one backward: F0 B0 F1 B1 W0 F2 B2 W1 ...
  auto reply = Get(*c, "/v1/jobs/" + id + "/schedule?rank=1");
  std::vector<std::string> names;
  for (const auto& entry : reply.body["frequencies"]) names.push_back(entry[0].get<std::string>());
  const std::vector<std::string> expected = {"forward",         "backward_input", "forward",         "backward_input",
                                             "backward_weight", "forward",        "backward_input",  "backward_weight",
                                             "forward",         "backward_input", "backward_weight", "backward_weight"};
  EXPECT_EQ(names, expected);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + id).body["planner"]["schedule"], "zb-h1");
}

// ZB-H1 ranks that measured B and W at 40:60 and upload them as rank profiles: the job is
// planned with the measured split, not with halves of the backward.
TEST(ServerSchedules, ZeroBubbleRanksMeasuredSplitIsPlannedAsMeasured) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  PlannerOptions options = TestPlannerOptions(4);
  options.schedule = PipelineScheduleKind::kZeroBubbleH1;
  std::string id =
      RegisterJobAndRanks(*c, {{"num_microbatches", 4}, {"p2p_power_w", options.p2p_power_w}, {"schedule", "zb-h1"}});
  Result<Profile> whole = ParseProfileCsv(TestProfileCsv(kScheduledJobStages), "test profile", kScheduledJobStages);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  Profile split = *whole;
  for (int s = 0; s < kScheduledJobStages; ++s) {
    json body = {{"rank", s}, {"dp_rank", 0}, {"pp_rank", s}, {"tp_rank", 0}};
    for (const Measurement& m : whole->measurements(s, InstructionKind::kForward)) {
      body["forward_time"][std::to_string(m.freq_mhz)] = m.time_s;
      body["forward_energy"][std::to_string(m.freq_mhz)] = m.energy_j;
    }
    for (const Measurement& m : whole->measurements(s, InstructionKind::kBackward)) {
      const Measurement input{m.freq_mhz, 0.4 * m.time_s, 0.4 * m.energy_j};
      const Measurement weight{m.freq_mhz, 0.6 * m.time_s, 0.6 * m.energy_j};
      split.mutable_measurements(s, InstructionKind::kBackwardInput).push_back(input);
      split.mutable_measurements(s, InstructionKind::kBackwardWeight).push_back(weight);
      const std::string f = std::to_string(m.freq_mhz);
      body["backward_input_time"][f] = input.time_s;
      body["backward_input_energy"][f] = input.energy_j;
      body["backward_weight_time"][f] = weight.time_s;
      body["backward_weight_energy"][f] = weight.energy_j;
    }
    auto upload = Post(*c, "/v1/jobs/" + id + "/rank_profiles", body);
    ASSERT_EQ(upload.status, 200) << upload.text;
  }
  json status = WaitForFrontier(*c, id);
  ASSERT_EQ(status["state"], "ready") << status.dump();
  Result<Frontier> expected = ComputeFrontierFromDeviceProfile(split, options);
  ASSERT_TRUE(expected.ok()) << expected.error().message;
  Result<Frontier> halves = ComputeFrontierFromDeviceProfile(*whole, options);
  ASSERT_TRUE(halves.ok()) << halves.error().message;
  auto points = Get(*c, "/v1/jobs/" + id + "/frontier/points?offset=0&limit=100000").body["points"];
  ASSERT_EQ(points.size(), expected->points().size());
  std::vector<std::pair<double, double>> served, planned, planned_in_halves;
  for (const json& p : points) served.emplace_back(p["time_s"].get<double>(), p["energy_j"].get<double>());
  for (const FrontierPoint& p : expected->points()) planned.emplace_back(p.time_s, p.energy_j);
  for (const FrontierPoint& p : halves->points()) planned_in_halves.emplace_back(p.time_s, p.energy_j);
  EXPECT_EQ(served, planned);
  EXPECT_NE(served, planned_in_halves) << "40:60 and 50:50 plan alike; the test shows nothing";
  ExpectRanksServedTheFastestPlan(*c, id, *expected);
}

TEST(ServerSchedules, InterleavedRanksRunEachOfTheirChunks) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  PlannerOptions options = TestPlannerOptions(4);
  options.schedule = PipelineScheduleKind::kInterleaved;
  options.virtual_stages = 2;
  std::string id = RegisterJobAndRanks(*c, {{"num_microbatches", 4},
                                            {"p2p_power_w", options.p2p_power_w},
                                            {"schedule", "interleaved"},
                                            {"virtual_stages", 2}});
  ExpectFastestSchedules(*c, id, options);
  auto reply = Get(*c, "/v1/jobs/" + id + "/schedule?rank=0");
  EXPECT_EQ(reply.body["frequencies"].size(), 2u * 2 * 4) << "forward and backward of 4 microbatches x 2 chunks";
  EXPECT_EQ(Get(*c, "/v1/jobs/" + id).body["planner"]["virtual_stages"], 2);
}

TEST(ServerSchedules, SettingsTheScheduleCannotRunAreRefused) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto not_multiple =
      Post(*c, "/register_job",
           {{"pp_degree", kScheduledJobStages},
            {"dp_degree", 1},
            {"tp_degree", 1},
            {"world_size", kScheduledJobStages},
            {"planner", {{"num_microbatches", 3}, {"schedule", "interleaved"}, {"virtual_stages", 2}}}});
  EXPECT_EQ(not_multiple.status, 422) << not_multiple.text;
  EXPECT_NE(not_multiple.text.find("the interleaved schedule needs the microbatches (3) to be a multiple of the "
                                   "pipeline devices (2)"),
            std::string::npos)
      << not_multiple.text;
  auto unknown = Post(*c, "/register_job",
                      {{"pp_degree", kScheduledJobStages},
                       {"dp_degree", 1},
                       {"tp_degree", 1},
                       {"world_size", kScheduledJobStages},
                       {"planner", {{"schedule", "zigzag"}}}});
  EXPECT_EQ(unknown.status, 422) << unknown.text;
  EXPECT_NE(unknown.text.find("expected \\\"1f1b\\\", \\\"gpipe\\\", \\\"interleaved\\\" or \\\"zb-h1\\\""),
            std::string::npos)
      << unknown.text;
  auto stray = Post(*c, "/register_job",
                    {{"pp_degree", kScheduledJobStages},
                     {"dp_degree", 1},
                     {"tp_degree", 1},
                     {"world_size", kScheduledJobStages},
                     {"planner", {{"num_microbatches", 4}, {"virtual_stages", 2}}}});
  EXPECT_EQ(stray.status, 422) << stray.text;
  EXPECT_NE(stray.text.find("virtual stages (2) need the interleaved schedule, not 1f1b"), std::string::npos)
      << stray.text;
}

}  // namespace
}  // namespace wattcut::testing
