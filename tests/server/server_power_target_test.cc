// Power targets (PUT/DELETE/GET /v1/jobs/{id}/power_target) on the real `wattcut serve`: a
// target is a new deployment version that every rank's GET /deployment gives from the same
// apply step, with the power-capped plan's frequencies; clearing it brings the selected plan
// back the same way; bad requests get clear errors; /metrics shows it; and a SIGKILL and a
// restart keep it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/server/planned_job.h"
#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/row_control/planning_server_client.h"
#include "wattcut/row_control/training_targets.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

// Every rank got version `version` of the deployment, from one apply step, with plan `index`'s
// frequencies for its stage; returns the apply step.
int64_t ExpectEveryRankRuns(const std::vector<json>& deployments, uint64_t version, size_t index,
                            const Frontier& frontier) {
  std::set<int64_t> apply_steps;
  for (int r = 0; r < kPlannedWorld; ++r) {
    const json& d = deployments[static_cast<size_t>(r)];
    EXPECT_EQ(d["version"], version) << "rank " << r << ": " << d.dump();
    EXPECT_EQ(d["mode"], "plan") << "rank " << r;
    EXPECT_EQ(d["plan_index"], index) << "rank " << r;
    EXPECT_EQ(d["frequencies"].dump(), StageScheduleJson(frontier, index, r % kPlannedPp)) << "rank " << r;
    apply_steps.insert(d.value("apply_from_step", int64_t{-1}));
  }
  EXPECT_EQ(apply_steps.size(), 1u) << "the ranks were given different apply steps";
  return *apply_steps.begin();
}

TEST(ServerPowerTarget, EveryRankSwitchesToThePowerCappedPlanAtOneStepAndBackWhenCleared) {
  ScopedTempDir dir("power_target");
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  auto c = server->Client();
  const std::string path = RegisterPlannedJob(*c);
  const Frontier frontier = TestFrontier(kPlannedPp, kPlannedMicrobatches);
  const size_t fastest = frontier.fastest_index();

  // The ranks run the fastest plan, and have run 10 steps.
  std::vector<json> first = FetchAll(*c, path, 0, 0);
  const uint64_t v1 = first[0]["version"];
  ExpectEveryRankRuns(first, v1, fastest, frontier);
  FetchAll(*c, path, 10, v1);

  // A peak target half-way down the frontier's peak powers.
  json points = Get(*c, "/v1/jobs/" + path + "/frontier/points?limit=10000").body["points"];
  ASSERT_EQ(points.size(), frontier.points().size());
  auto peak_per_gpu = [&](size_t i) { return points[i]["peak_1s_power_w"].get<double>() / kPlannedPp; };
  const double watts = peak_per_gpu(points.size() / 2);
  size_t capped = 0;
  for (size_t i = points.size(); i-- > 0;) {
    if (peak_per_gpu(i) <= watts) {
      capped = i;
      break;
    }
  }
  ASSERT_LT(capped, fastest);
  auto set = Put(*c, "/v1/jobs/" + path + "/power_target", {{"peak_power_per_gpu_w", watts}, {"reason", "row 4"}});
  ASSERT_EQ(set.status, 200) << set.text;
  EXPECT_EQ(set.body["met"], true);
  EXPECT_EQ(set.body["kind"], "peak_1s");
  EXPECT_EQ(set.body["point"]["index"], capped);
  EXPECT_EQ(set.body["deployment"]["version"], v1 + 1);
  const int64_t switch_step = ExpectEveryRankRuns(FetchAll(*c, path, 10, v1), v1 + 1, capped, frontier);
  EXPECT_GT(switch_step, 10);
  EXPECT_EQ(set.body["deployment"]["apply_from_step"], switch_step);
  auto got = Get(*c, "/v1/jobs/" + path + "/power_target");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["deployment"]["every_rank_past_apply_step"], false);
  FetchAll(*c, path, static_cast<int>(switch_step) + 1, v1 + 1);  // every rank ran the apply step
  got = Get(*c, "/v1/jobs/" + path + "/power_target");
  EXPECT_EQ(got.body["deployment"]["every_rank_past_apply_step"], true) << got.text;
  EXPECT_EQ(got.body["power_target"], (json{{"peak_power_per_gpu_w", watts}, {"reason", "row 4"}}));
  const std::string job_label = "job_id=\"" + got.body["job_id"].get<std::string>() + "\"";
  std::string metrics = Get(*c, "/metrics").text;
  EXPECT_NE(metrics.find("wattcut_power_target_met{" + job_label + "} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("wattcut_power_target_per_gpu_watts{" + job_label + ",kind=\"peak_1s\"}"), std::string::npos);

  // Bad requests change nothing and say what was wrong.
  struct Bad {
    HttpReply reply;
    int status;
    const char* says;
  };
  const Bad bad[] = {
      {Put(*c, "/v1/jobs/" + path + "/power_target", json::object()), 422, "exactly one of"},
      {Put(*c, "/v1/jobs/" + path + "/power_target", {{"peak_power_per_gpu_w", 300}, {"avg_power_per_gpu_w", 200}}),
       422, "exactly one of"},
      {Put(*c, "/v1/jobs/" + path + "/power_target", {{"avg_power_per_gpu_w", 0}}), 422, "expected watts > 0"},
      {PostRaw(*c, "/v1/jobs/" + path + "/power_target", "{}"), 404, ""},  // no POST route
      {Put(*c, "/v1/jobs/no-such-job/power_target", {{"avg_power_per_gpu_w", 200}}), 404, "unknown job"},
  };
  for (const Bad& b : bad) {
    EXPECT_EQ(b.reply.status, b.status) << b.reply.text;
    EXPECT_NE(b.reply.text.find(b.says), std::string::npos) << b.reply.text;
  }
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path + "/power_target").body["deployment"]["version"], v1 + 1);

  // SIGKILL and a restart on the same folder: the target and its version are kept.
  server->Kill();
  server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  c = server->Client();
  got = Get(*c, "/v1/jobs/" + path + "/power_target");
  ASSERT_EQ(got.status, 200) << got.text;
  EXPECT_EQ(got.body["power_target"], (json{{"peak_power_per_gpu_w", watts}, {"reason", "row 4"}}));
  EXPECT_EQ(got.body["deployment"]["version"], v1 + 1);
  EXPECT_EQ(got.body["met"], true);
  ExpectEveryRankRuns(FetchAll(*c, path, 0, 0), v1 + 1, capped, frontier);  // restarted ranks

  // Clearing: the selected (fastest) plan again, a new version, one apply step.
  FetchAll(*c, path, 30, v1 + 1);
  auto cleared = Delete(*c, "/v1/jobs/" + path + "/power_target");
  ASSERT_EQ(cleared.status, 200) << cleared.text;
  EXPECT_TRUE(cleared.body["power_target"].is_null());
  EXPECT_EQ(cleared.body["deployment"]["version"], v1 + 2);
  EXPECT_GT(ExpectEveryRankRuns(FetchAll(*c, path, 30, v1 + 1), v1 + 2, fastest, frontier), 30);
  metrics = Get(*c, "/metrics").text;
  EXPECT_EQ(metrics.find("wattcut_power_target_met{" + job_label), std::string::npos) << metrics;
}

// The row controller's side of the contract (row_control/training_targets.h) on the real server:
// what it reads from the answers is what the server means. A target is requested, not complied
// until every rank has run past the apply step, complied after; one no plan meets is "not met";
// an unknown job is kNotFound; a cleared target reads as none.
TEST(ServerPowerTarget, TheRowControllersClientReadsComplianceFromTheRealServer) {
  ScopedTempDir dir("power_target_client");
  ServerProcess server(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const std::string path = RegisterPlannedJob(*c);
  const std::string job_id = Get(*c, "/v1/jobs/" + path + "/power_target").body["job_id"];
  ASSERT_NE(job_id.find('+'), std::string::npos) << "a job id with the characters a path must encode";
  std::vector<json> first = FetchAll(*c, path, 0, 0);
  const uint64_t v1 = first[0]["version"];
  FetchAll(*c, path, 5, v1);

  row_control::AgentTimeouts timeouts;
  timeouts.connect_timeout_s = 10;
  timeouts.request_timeout_s = 30;
  auto client =
      row_control::PlanningServerClient::Create("http://127.0.0.1:" + std::to_string(server.port()), "", timeouts);
  ASSERT_TRUE(client.ok()) << client.error().message;
  json points = Get(*c, "/v1/jobs/" + path + "/frontier/points?limit=10000").body["points"];
  const double watts = points[points.size() / 2]["peak_1s_power_w"].get<double>() / kPlannedPp;
  const std::string reason = row_control::TrainingTargetReason({polca::PolicyLevel::kT1, false}, 0.85);

  auto set = (*client)->SetPeakPowerTarget(job_id, watts, reason, 30);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->target_w, watts);
  EXPECT_EQ(set->reason, reason);
  EXPECT_EQ(set->kind, "peak_1s");
  EXPECT_TRUE(set->applied);
  EXPECT_TRUE(set->met);
  EXPECT_FALSE(set->every_rank_past_apply_step);
  EXPECT_FALSE(set->complied()) << "no rank has reached the new plan";
  EXPECT_EQ(set->deployment_version, v1 + 1);
  ASSERT_TRUE(set->point_power_per_gpu_w.has_value());
  EXPECT_LE(*set->point_power_per_gpu_w, watts);

  const int64_t apply = Get(*c, "/v1/jobs/" + path + "/power_target").body["deployment"]["apply_from_step"];
  FetchAll(*c, path, static_cast<int>(apply) + 1, v1 + 1);
  auto got = (*client)->GetPowerTarget(job_id);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->complied());

  const double below_every_plan = 0.5 * points[0]["peak_1s_power_w"].get<double>() / kPlannedPp;
  auto low = (*client)->SetPeakPowerTarget(job_id, below_every_plan, reason, 30);
  ASSERT_TRUE(low.ok()) << low.error().message;
  EXPECT_TRUE(low->applied);
  EXPECT_FALSE(low->met);
  EXPECT_FALSE(low->complied());

  auto cleared = (*client)->ClearPowerTarget(job_id);
  ASSERT_TRUE(cleared.ok()) << cleared.error().message;
  EXPECT_EQ(cleared->target_w, std::nullopt);

  auto unknown = (*client)->GetPowerTarget("no-such-job");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound) << unknown.error().message;
}

}  // namespace
}  // namespace wattcut::testing
