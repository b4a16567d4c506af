// PlanningServerClient against a small planning server on 127.0.0.1 (http/test_http_server.h) that
// answers as `wattcut serve` does (the contract itself, on the real server, is tests/server's
// RowControlPlanningServer test), and the answer's parser on what the server would not send.
#include "wattcut/row_control/planning_server_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "wattcut/http/test_http_server.h"
#include "wattcut/row_control/loopback_timeouts_testing.h"

namespace wattcut::row_control {
namespace {

using ::testing::HasSubstr;
using testing::LoopbackTimeouts;

// An answer as docs/server.md gives it.
constexpr const char* kAnswer = R"({"job_id": "j", "power_target": {"peak_power_per_gpu_w": 250, "reason": "row 7"},
 "kind": "peak_1s", "frontier": "ready", "applied": true, "met": true,
 "selected": {"index": 503}, "point": {"index": 446}, "point_power_per_gpu_w": 249.86,
 "deployment": {"version": 2, "apply_from_step": 1, "ranks_min_step": 3,
                "every_rank_past_apply_step": true, "plan_index": 446}})";

TEST(PlanningServerClient, ParsesTheServersAnswer) {
  auto t = JobPowerTargetOf(kAnswer);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->target_w, 250);
  EXPECT_EQ(t->reason, "row 7");
  EXPECT_EQ(t->kind, "peak_1s");
  EXPECT_TRUE(t->applied);
  EXPECT_TRUE(t->met);
  EXPECT_TRUE(t->every_rank_past_apply_step);
  EXPECT_EQ(t->deployment_version, 2u);
  EXPECT_EQ(t->point_power_per_gpu_w, 249.86);
  EXPECT_TRUE(t->complied());

  auto none = JobPowerTargetOf(
      R"({"job_id": "j", "power_target": null, "frontier": "ready", "applied": false,
          "deployment": {"version": 3, "apply_from_step": 9, "ranks_min_step": null, "every_rank_past_apply_step": false}})");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->target_w, std::nullopt);
  EXPECT_FALSE(none->complied());

  auto pending = JobPowerTargetOf(
      R"({"power_target": {"peak_power_per_gpu_w": 250}, "kind": "peak_1s", "frontier": "computing",
          "applied": false, "note": "the frontier is computing: the target is kept",
          "deployment": {"version": 0, "every_rank_past_apply_step": false}})");
  ASSERT_TRUE(pending.ok()) << pending.error().message;
  EXPECT_FALSE(pending->complied());
  EXPECT_EQ(pending->note, "the frontier is computing: the target is kept");
}

TEST(PlanningServerClient, AMalformedAnswerNamesTheField) {
  auto error = [](const std::string& body) {
    auto t = JobPowerTargetOf(body);
    return t.ok() ? std::string("(parsed)") : t.error().message;
  };
  EXPECT_THAT(error("<html>"), HasSubstr("the answer is not JSON"));
  EXPECT_THAT(error("[1]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(error(R"({"applied": true})"), HasSubstr("field 'power_target' is missing"));
  EXPECT_THAT(error(R"({"power_target": 5})"), HasSubstr("field 'power_target': expected an object or null, got 5"));
  EXPECT_THAT(error(R"({"power_target": {"peak_power_per_gpu_w": "x"}})"),
              HasSubstr("field 'power_target.peak_power_per_gpu_w': expected a number"));
  EXPECT_THAT(error(R"({"power_target": null, "applied": true})"), HasSubstr("field 'deployment': expected an object"));
  EXPECT_THAT(error(R"({"power_target": null, "applied": 1, "deployment": {}})"),
              HasSubstr("field 'applied': expected true or false, got 1"));
  EXPECT_THAT(error(R"({"power_target": {"peak_power_per_gpu_w": 250}, "kind": "peak_1s", "applied": true,
                        "deployment": {"version": 1, "every_rank_past_apply_step": true}})"),
              HasSubstr("field 'met' is missing"));
}

// A planning server holding one job's answer; records what it was asked.
struct FakePlanningServer {
  std::mutex mu;
  std::vector<std::string> requests;  // "PUT job-id body"
  std::string authorization;
  std::unique_ptr<http::testing::TestHttpServer> server;

  FakePlanningServer() {
    server = http::testing::TestHttpServer::OnLoopback([this](http::BoundedHttpServer& s) {
      auto handler = [this](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(mu);
        requests.push_back(req.method + " " + std::string(req.matches[1]) + (req.body.empty() ? "" : " " + req.body));
        authorization = req.get_header_value("Authorization");
        if (req.matches[1] != "2026+dp1+pp2+tp1+perseus+1") {
          res.status = 404;
          res.set_content(R"({"error": "no job 'nope'", "code": "not_found"})", "application/json");
          return;
        }
        res.set_content(kAnswer, "application/json");
      };
      s.Put(R"(/v1/jobs/([^/]+)/power_target)", handler);
      s.Get(R"(/v1/jobs/([^/]+)/power_target)", handler);
      s.Delete(R"(/v1/jobs/([^/]+)/power_target)", handler);
    });
  }
};

TEST(PlanningServerClient, SetsReadsAndClearsAJobsTargetWithTheToken) {
  FakePlanningServer planning;
  ASSERT_NE(planning.server, nullptr);
  auto client = PlanningServerClient::Create(planning.server->base_url(), "planning-token", LoopbackTimeouts());
  ASSERT_TRUE(client.ok()) << client.error().message;
  const std::string job = "2026+dp1+pp2+tp1+perseus+1";
  auto set = (*client)->SetPeakPowerTarget(job, 250, "wattcut polca control: polca level=t1 brake=off", 30);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_TRUE(set->complied());
  ASSERT_TRUE((*client)->GetPowerTarget(job).ok());
  ASSERT_TRUE((*client)->ClearPowerTarget(job).ok());
  std::lock_guard lock(planning.mu);
  ASSERT_EQ(planning.requests.size(), 3u);
  EXPECT_EQ(
      planning.requests[0],
      "PUT " + job +
          R"( {"lease_s":30.0,"peak_power_per_gpu_w":250.0,"reason":"wattcut polca control: polca level=t1 brake=off"})");
  EXPECT_EQ(planning.requests[1], "GET " + job) << "the job id's '+' arrives as itself";
  EXPECT_EQ(planning.requests[2], "DELETE " + job);
  EXPECT_EQ(planning.authorization, "Bearer planning-token");
}

TEST(PlanningServerClient, AnUnknownJobAndAnUnreachableServerAreErrorsNamingThem) {
  FakePlanningServer planning;
  ASSERT_NE(planning.server, nullptr);
  auto client = PlanningServerClient::Create(planning.server->base_url(), "", LoopbackTimeouts());
  ASSERT_TRUE(client.ok());
  auto missing = (*client)->GetPowerTarget("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(missing.error().message, HasSubstr("planning server " + planning.server->base_url() +
                                                 ": job nope: GET /v1/jobs/nope/power_target"));
  EXPECT_THAT(missing.error().message, HasSubstr("no job 'nope'"));

  const std::string url = planning.server->base_url();
  planning.server.reset();  // nothing listens there now
  auto gone = (*client)->GetPowerTarget("nope");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kUnavailable) << gone.error().message;
  EXPECT_THAT(gone.error().message, HasSubstr("planning server " + url + ": job nope"));

  auto bad = PlanningServerClient::Create("10.0.0.1:7787", "", LoopbackTimeouts());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("planning server URL '10.0.0.1:7787': expected http://HOST:PORT"));
}

}  // namespace
}  // namespace wattcut::row_control
