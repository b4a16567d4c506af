// GET /, the status page, from the real `wattcut serve`: the page follows a job from
// registration to its plan, escapes what the job's client sent, counts the energy the
// deployed plan saved over the steps the ranks report (against the AllMax point the
// profile gives), and needs the token like every endpoint. (The page in a real browser:
// status_page_browser_test.py.)
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/plan/all_max.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

// The job the page shows: pp 2 x dp 2, 4 microbatches.
constexpr int kShownJobPp = 2, kShownJobDp = 2, kShownJobMicrobatches = 4;
const char* const kName = "bert<large> & \"friends\"";

// The page's "saved" figure in joules.
double SavedJoules(const std::string& page) {
  std::smatch m;
  if (!std::regex_search(page, m, std::regex(R"(<span class="saved">(-?[0-9.]+) (J|kJ|MJ)</span>)"))) return -1;
  const double scale = m[2] == "MJ" ? 1e6 : m[2] == "kJ" ? 1e3 : 1;
  return std::stod(m[1]) * scale;
}

TEST(ServerStatusPage, FollowsAJobFromRegistrationToTheEnergyItsPlanSaved) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto empty = c->Get("/");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->status, 200);
  EXPECT_EQ(empty->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(empty->body.find("No jobs are registered."), std::string::npos);

  const PlannerOptions options = TestPlannerOptions(kShownJobMicrobatches);
  auto job = Post(*c, "/register_job",
                  {{"pp_degree", kShownJobPp},
                   {"dp_degree", kShownJobDp},
                   {"tp_degree", 1},
                   {"world_size", kShownJobPp * kShownJobDp},
                   {"job_metadata", kName},
                   {"planner", {{"num_microbatches", kShownJobMicrobatches}, {"p2p_power_w", options.p2p_power_w}}}});
  ASSERT_EQ(job.status, 200) << job.text;
  const std::string id = job.body.get<std::string>();
  std::string page = c->Get("/")->body;
  EXPECT_NE(page.find("bert&lt;large&gt; &amp; &quot;friends&quot;"), std::string::npos);
  EXPECT_EQ(page.find(kName), std::string::npos);
  EXPECT_NE(page.find("registering ranks (0 of 4)"), std::string::npos);

  for (int r = 0; r < kShownJobPp * kShownJobDp; ++r) {
    auto reply = Post(*c, "/register_rank/" + id,
                      {{"rank", r},
                       {"dp_rank", r / kShownJobPp},
                       {"pp_rank", r % kShownJobPp},
                       {"tp_rank", 0},
                       {"available_frequencies", TestFrequencies()}});
    ASSERT_EQ(reply.status, 200) << reply.text;
  }
  EXPECT_NE(c->Get("/")->body.find("waiting for a profile"), std::string::npos);

  const std::string csv = TestProfileCsv(kShownJobPp);
  ASSERT_EQ(Put(*c, "/v1/jobs/" + id + "/profile", {{"csv", csv}}).status, 202);
  ASSERT_EQ(WaitForFrontier(*c, id)["state"], "ready");
  page = c->Get("/")->body;
  EXPECT_NE(page.find("<span class=\"phase\">planned</span>"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("no step reported yet"), std::string::npos);

  // Every rank reports step 0, then step 10. The plan was deployed (version 1) from step 1,
  // so step 0 ran AllMax and steps 1..9 the fastest plan, on both pipelines.
  for (int step : {0, 10}) {
    for (int r = 0; r < kShownJobPp * kShownJobDp; ++r) {
      auto d = Get(*c, "/v1/jobs/" + id + "/deployment?rank=" + std::to_string(r) + "&step=" + std::to_string(step));
      ASSERT_EQ(d.status, 200) << d.text;
      ASSERT_EQ(d.body["apply_from_step"], 1) << d.text;
    }
  }
  page = c->Get("/")->body;
  EXPECT_NE(page.find("over 10 steps reported since the server started (9 of them under a plan)"), std::string::npos);
  auto profile = ParseProfileCsv(csv, "test", kShownJobPp);
  ASSERT_TRUE(profile.ok());
  const Frontier frontier = TestFrontier(kShownJobPp, kShownJobMicrobatches);
  // AllMax as `wattcut frontier` prints it: every computation at its highest clock, blocking until T_min.
  const double all_max_s = frontier.points()[frontier.fastest_index()].time_s;
  EXPECT_NE(page.find("<th>AllMax</th><td>" + FixedDecimals(all_max_s, all_max_s < 1 ? 4 : 3) + " s, "),
            std::string::npos)
      << page;
  const double all_max_j = AllMaxEnergy(*profile, frontier.setup().schedule, all_max_s, options.p2p_power_w);
  const double expected_j = 9 * kShownJobDp * (all_max_j - frontier.points().back().energy_j);
  ASSERT_GT(expected_j, 0);
  EXPECT_NEAR(SavedJoules(page), expected_j, expected_j * 1e-3) << page;
}

TEST(ServerStatusPage, ShowsTheTwentyNewestJobsAndCountsTheOthers) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  // Registered within a second or two: their ids differ only in the sequence number.
  for (int i = 0; i < 22; ++i) {
    const std::string name = "job-" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    auto job = Post(*c, "/register_job",
                    {{"pp_degree", 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 1}, {"job_metadata", name}});
    ASSERT_EQ(job.status, 200) << job.text;
  }
  const std::string page = c->Get("/")->body;
  EXPECT_NE(page.find("22 jobs (the 20 most recently registered shown)"), std::string::npos);
  EXPECT_EQ(page.find(">job-00<"), std::string::npos);
  EXPECT_EQ(page.find(">job-01<"), std::string::npos);
  for (int i = 2; i < 22; ++i) {
    const std::string name = "job-" + std::string(i < 10 ? "0" : "") + std::to_string(i);
    EXPECT_NE(page.find(">" + name + "<"), std::string::npos) << name;
  }
  EXPECT_LT(page.find(">job-21<"), page.find(">job-10<"));  // newest first
  EXPECT_LT(page.find(">job-10<"), page.find(">job-02<"));
  EXPECT_LT(page.find(">job-03<"), page.find(">job-02<"));
}

TEST(ServerStatusPage, NeedsTheTokenLikeEveryEndpoint) {
  ScopedTempDir dir("status_token");
  const std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "s3cret\n";
  ServerProcess server({"--token-file", token_file});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto refused = c->Get("/");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->body.find("<html"), std::string::npos);
  c->set_bearer_token_auth("s3cret");
  auto page = c->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("wattcut planning server"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::testing
