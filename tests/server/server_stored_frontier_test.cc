// Stored frontiers (issue 15): after SIGKILL and a restart, a job's frontier is ready on
// the first answer, with the same points and plans. The large case is GPT-3 on
// the A40 at 96 microbatches and 0.1 ms units (65,844 points when it was filed); on this
// tree's built-in A40 model with 8 stages it has 83,891 points and takes seconds to
// compute, which a restart used to spend serving AllMax.
#include <gtest/gtest.h>

#include "tests/server/server_process.h"
#include "wattcut/profile/gpu_model.h"
#include "wattcut/profile/profile_csv.h"
#include "wattcut/runtime/plan_server_client.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

TEST(ServerStoredFrontier, ReadyOnTheFirstAnswerAfterSigkillForTheLargeA40Case) {
  auto model = FindGpuModel("a40");
  ASSERT_TRUE(model.ok()) << model.error().message;
  const std::string csv = ProfileCsvText(MakeModelProfile(**model, 8));
  ScopedTempDir dir("stored_frontier");
  std::string path;
  json before;
  json points_before;
  json schedule_before;
  {
    ServerProcess server({}, dir.path());
    ASSERT_TRUE(server.running()) << server.startup_output();
    auto c = server.Client();
    auto job = Post(
        *c, "/register_job",
        {{"pp_degree", 8},
         {"dp_degree", 1},
         {"tp_degree", 1},
         {"world_size", 8},
         {"planner", {{"num_microbatches", 96}, {"unit_time_s", 0.0001}, {"p2p_power_w", (*model)->p2p_power_w}}}});
    ASSERT_EQ(job.status, 200) << job.text;
    path = EncodeJobIdForPath(job.body.get<std::string>());
    for (int r = 0; r < 8; ++r) {
      std::vector<int> freqs;
      for (int f = (*model)->max_freq_mhz; f >= 855; f -= (*model)->freq_step_mhz) freqs.push_back(f);
      ASSERT_EQ(Post(*c, "/register_rank/" + path,
                     {{"rank", r}, {"dp_rank", 0}, {"pp_rank", r}, {"tp_rank", 0}, {"available_frequencies", freqs}})
                    .status,
                200);
    }
    ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/profile", {{"csv", csv}}).status, 202);
    before = WaitForFrontier(*c, path);
    ASSERT_EQ(before.value("state", ""), "ready") << before.dump();
    ASSERT_EQ(before["num_points"], 83891) << before.dump();
    ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/plan", {{"point", "min_energy"}}).status, 200);
    before = Get(*c, "/v1/jobs/" + path + "/frontier").body;
    points_before = Get(*c, "/v1/jobs/" + path + "/frontier/points?offset=30000&limit=500").body;
    schedule_before = Get(*c, "/v1/jobs/" + path + "/schedule?rank=5").body;
    ASSERT_EQ(schedule_before.value("mode", ""), "plan") << schedule_before.dump();
    server.Kill();
  }
  ServerProcess server({}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  json after = Get(*c, "/v1/jobs/" + path + "/frontier").body;  // the first answer
  EXPECT_EQ(after.value("state", ""), "ready") << after.dump();
  EXPECT_EQ(after, before);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path + "/frontier/points?offset=30000&limit=500").body, points_before);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path + "/schedule?rank=5").body, schedule_before);
  // Served from the store: nothing was computed in this process.
  EXPECT_NE(Get(*c, "/metrics").text.find("wattcut_frontier_computations_total{outcome=\"ok\"} 0\n"),
            std::string::npos);
}

}  // namespace
}  // namespace wattcut::testing
