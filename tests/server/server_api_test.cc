// The planning server end to end over HTTP: planning, schedules, stragglers, dp/tp
// replicas, the wattcut endpoints, validation errors and authentication.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <thread>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plan/plan_lookup.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

// The shape of the jobs these tests plan: 4 stages, 4 microbatches.
constexpr int kApiJobStages = 4;
constexpr int kApiJobMicrobatches = 4;

json RankInfoJson(int rank, int dp, int pp, int tp, const std::vector<int>& freqs) {
  return {{"rank", rank}, {"dp_rank", dp}, {"pp_rank", pp}, {"tp_rank", tp}, {"available_frequencies", freqs}};
}

json PlannerJson() {
  PlannerOptions o = TestPlannerOptions(kApiJobMicrobatches);
  return {{"num_microbatches", o.num_microbatches}, {"p2p_power_w", o.p2p_power_w}};
}

// Registers a pp x dp x tp job and all of its ranks (Megatron order: tp fastest, then
// pp, then dp). Returns the job id.
std::string RegisterJobAndRanks(httplib::Client& c, int pp, int dp, int tp) {
  auto job = Post(c, "/register_job",
                  {{"pp_degree", pp},
                   {"dp_degree", dp},
                   {"tp_degree", tp},
                   {"world_size", pp * dp * tp},
                   {"planner", PlannerJson()}});
  EXPECT_EQ(job.status, 200) << job.text;
  std::string id = job.body.get<std::string>();
  for (int d = 0; d < dp; ++d) {
    for (int p = 0; p < pp; ++p) {
      for (int t = 0; t < tp; ++t) {
        int rank = (d * pp + p) * tp + t;
        auto r = Post(c, "/register_rank/" + id, RankInfoJson(rank, d, p, t, TestFrequencies()));
        EXPECT_EQ(r.status, 200) << r.text;
      }
    }
  }
  return id;
}

// One round: every rank asks for its schedule at once; returns schedules by rank.
std::vector<json> FetchRound(const ServerProcess& server, const std::string& id, int world) {
  std::vector<json> out(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      auto c = server.Client();
      auto reply = Get(*c, "/schedule/" + id + "?rank=" + std::to_string(r));
      EXPECT_EQ(reply.status, 200) << reply.text;
      out[static_cast<size_t>(r)] = reply.body;
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(ServerApi, ServesTheFastestPlanThenStragglerPlansToOtherPipelines) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const int pp = kApiJobStages, dp = 2, tp = 2, world = pp * dp * tp;
  std::string id = RegisterJobAndRanks(*c, pp, dp, tp);

  auto upload = Put(*c, "/v1/jobs/" + id + "/profile", {{"csv", TestProfileCsv(kApiJobStages)}});
  ASSERT_EQ(upload.status, 202) << upload.text;
  json status = WaitForFrontier(*c, id);
  ASSERT_EQ(status["state"], "ready") << status.dump();

  Frontier expected = TestFrontier(kApiJobStages, kApiJobMicrobatches);
  ASSERT_EQ(status["num_points"].get<size_t>(), expected.points().size());
  size_t fastest = expected.fastest_index();

  // Round 1: every replica of a stage gets the stage's fastest plan.
  auto round1 = FetchRound(server, id, world);
  for (int r = 0; r < world; ++r) {
    int stage = (r / tp) % pp;
    ASSERT_EQ(round1[r]["rank"], r);
    EXPECT_EQ(round1[r]["frequencies"].dump(), StageScheduleJson(expected, fastest, stage)) << "rank " << r;
  }

  // Pipeline dp=1 straggles by 1.2x: pipeline dp=0 slows to the plan at min(T', T*).
  auto straggle = Post(*c, "/v1/jobs/" + id + "/stragglers", {{"dp_rank", 1}, {"slowdown", 1.2}});
  ASSERT_EQ(straggle.status, 200) << straggle.text;
  double t_prime = 1.2 * expected.points()[fastest].time_s;
  size_t slow = expected.IndexForIterationTime(t_prime);
  EXPECT_EQ(straggle.body["non_straggler_index"].get<size_t>(), slow);
  EXPECT_NE(slow, fastest);
  auto round2 = FetchRound(server, id, world);
  for (int r = 0; r < world; ++r) {
    int stage = (r / tp) % pp;
    int d = r / (pp * tp);
    size_t index = d == 1 ? fastest : slow;
    EXPECT_EQ(round2[r]["frequencies"].dump(), StageScheduleJson(expected, index, stage)) << "rank " << r;
  }

  // A measured iteration time works the same way.
  double t_measured = expected.points()[fastest].time_s * 1.1;
  ASSERT_EQ(Post(*c, "/v1/jobs/" + id + "/stragglers", {{"dp_rank", 1}, {"iteration_time_s", t_measured}}).status, 200);
  auto preview = Get(*c, "/v1/jobs/" + id + "/schedule?rank=0");
  ASSERT_EQ(preview.status, 200) << preview.text;
  EXPECT_EQ(preview.body["plan_index"].get<size_t>(), expected.IndexForIterationTime(t_measured));

  // Recovered: everyone back to the fastest plan.
  ASSERT_EQ(Post(*c, "/v1/jobs/" + id + "/stragglers", {{"dp_rank", 1}, {"recovered", true}}).status, 200);
  auto round3 = FetchRound(server, id, world);
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(round3[r]["frequencies"].dump(), StageScheduleJson(expected, fastest, (r / tp) % pp));
  }

  // Plan selection: the minimum-energy point for everyone.
  auto select = Put(*c, "/v1/jobs/" + id + "/plan", {{"point", "min_energy"}});
  ASSERT_EQ(select.status, 200) << select.text;
  EXPECT_EQ(select.body["index"].get<size_t>(), expected.min_energy_index());
  auto round4 = FetchRound(server, id, world);
  EXPECT_EQ(round4[0]["frequencies"].dump(), StageScheduleJson(expected, expected.min_energy_index(), 0));

  // Frontier points, paged.
  auto points = Get(*c, "/v1/jobs/" + id + "/frontier/points?offset=1&limit=2");
  ASSERT_EQ(points.status, 200);
  ASSERT_EQ(points.body["points"].size(), 2u);
  EXPECT_EQ(points.body["points"][0]["index"], 1);
  EXPECT_DOUBLE_EQ(points.body["points"][0]["time_s"].get<double>(), expected.points()[1].time_s);

  // Power per plan, as `wattcut frontier` writes it: every point's average power and the peak
  // 1-s power of its execution timeline (plan/frontier_power.h), computed by the server.
  auto profile = ParseProfileCsv(TestProfileCsv(kApiJobStages), "t", kApiJobStages);
  ASSERT_TRUE(profile.ok());
  Result<Frontier> powered = ComputeFrontierWithPeakPowers(*profile, TestPlannerOptions(kApiJobMicrobatches));
  ASSERT_TRUE(powered.ok()) << powered.error().message;
  auto all = Get(*c, "/v1/jobs/" + id + "/frontier/points?offset=0&limit=10000");
  ASSERT_EQ(all.status, 200);
  ASSERT_EQ(all.body["points"].size(), powered->points().size());
  for (size_t i = 0; i < powered->points().size(); ++i) {
    const json& point = all.body["points"][i];
    ASSERT_TRUE(point["peak_1s_power_w"].is_number()) << point.dump();
    EXPECT_DOUBLE_EQ(point["peak_1s_power_w"].get<double>(), *powered->points()[i].peak_1s_power_w) << i;
    EXPECT_DOUBLE_EQ(point["avg_power_w"].get<double>(), AveragePowerW(powered->points()[i])) << i;
    EXPECT_DOUBLE_EQ(point["avg_power_per_gpu_w"].get<double>(), AveragePowerPerGpuW(*powered, i)) << i;
    EXPECT_GE(point["peak_1s_power_w"].get<double>(), point["avg_power_w"].get<double>() * (1 - 1e-12)) << i;
  }
}

TEST(ServerApi, PerRankProfilesAreAggregatedPerStage) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const int pp = 2, dp = 2, tp = 2;
  std::string id = RegisterJobAndRanks(*c, pp, dp, tp);
  // Every rank uploads the stage's modelled measurements; tp ranks split the energy.
  auto profile = ParseProfileCsv(TestProfileCsv(pp), "t", pp);
  ASSERT_TRUE(profile.ok());
  for (int d = 0; d < dp; ++d) {
    for (int p = 0; p < pp; ++p) {
      for (int t = 0; t < tp; ++t) {
        json body = {{"rank", (d * pp + p) * tp + t}, {"dp_rank", d}, {"pp_rank", p}, {"tp_rank", t}};
        for (int k = 0; k < 2; ++k) {
          auto kind = static_cast<InstructionKind>(k);
          json times = json::object(), energies = json::object();
          for (const Measurement& m : profile->measurements(p, kind)) {
            times[std::to_string(m.freq_mhz)] = m.time_s * (t == 0 ? 1.0 : 0.9);
            energies[std::to_string(m.freq_mhz)] = m.energy_j / tp;
          }
          body[std::string(InstructionName(kind)) + "_time"] = times;
          body[std::string(InstructionName(kind)) + "_energy"] = energies;
        }
        auto reply = Post(*c, "/v1/jobs/" + id + "/rank_profiles", body);
        ASSERT_EQ(reply.status, 200) << reply.text;
      }
    }
  }
  json status = WaitForFrontier(*c, id);
  ASSERT_EQ(status["state"], "ready") << status.dump();
  // Max time over tp and summed energy give back the stage profile, so the frontier
  // matches the one of the whole-job profile.
  Frontier expected = TestFrontier(pp, kApiJobMicrobatches);
  EXPECT_EQ(status["num_points"].get<size_t>(), expected.points().size());
  EXPECT_NEAR(status["fastest"]["energy_j"].get<double>(), expected.points()[expected.fastest_index()].energy_j,
              1e-6 * expected.points()[expected.fastest_index()].energy_j);
  EXPECT_EQ(Get(*c, "/v1/jobs/" + id).body["profile_source"], "rank_profiles");
}

TEST(ServerApi, ListsDeletesAndDocumentsItself) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  EXPECT_EQ(Get(*c, "/healthz").status, 200);
  std::string id = RegisterJobAndRanks(*c, 2, 1, 1);
  auto list = Get(*c, "/v1/jobs");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["jobs"].size(), 1u);
  EXPECT_EQ(list.body["jobs"][0]["job_id"], id);
  EXPECT_EQ(list.body["jobs"][0]["ranks_registered"], 2);

  auto metrics = Get(*c, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.text.find("wattcut_jobs 1\n"), std::string::npos) << metrics.text;
  EXPECT_NE(metrics.text.find("wattcut_ranks 2\n"), std::string::npos);
  EXPECT_NE(metrics.text.find("wattcut_http_requests_total{endpoint=\"register_rank\",method="
                              "\"POST\",status=\"200\"} 2"),
            std::string::npos);
  EXPECT_NE(metrics.text.find("wattcut_http_request_duration_seconds_bucket{endpoint=\"register_job\""),
            std::string::npos);
  EXPECT_NE(metrics.text.find("wattcut_frontier_computations_total"), std::string::npos);

  auto openapi = Get(*c, "/openapi.yaml");
  ASSERT_EQ(openapi.status, 200);
  for (const char* path : {"/register_job", "/register_rank/{job_id}", "/schedule/{job_id}", "/result/{job_id}",
                           "/v1/jobs/{job_id}/stragglers", "/metrics"}) {
    EXPECT_NE(openapi.text.find(std::string(path) + ":"), std::string::npos) << path;
  }

  auto del = Delete(*c, "/v1/jobs/" + id);
  ASSERT_EQ(del.status, 200) << del.text;
  EXPECT_EQ(Get(*c, "/v1/jobs/" + id).status, 404);
  EXPECT_EQ(Get(*c, "/v1/jobs").body["jobs"].size(), 0u);
}

// Every bad request gets a 4xx with a JSON error that says what was wrong.
TEST(ServerApi, RejectsBadRequestsWithClearErrors) {
  ServerProcess server({"--max-body-bytes", "65536", "--long-poll-timeout", "2"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  std::string id = RegisterJobAndRanks(*c, 2, 1, 1);

  struct Case {
    const char* what;
    HttpReply reply;
    int status;
    const char* needle;
  };
  std::vector<int> freqs = TestFrequencies();
  std::vector<Case> cases = {
      {"malformed JSON", PostRaw(*c, "/register_job", "{\"pp_degree\": "), 400, "malformed JSON"},
      {"empty body", PostRaw(*c, "/register_job", ""), 400, "empty"},
      {"wrong type",
       Post(*c, "/register_job", {{"pp_degree", "two"}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 2}}), 422,
       "'pp_degree': expected an integer"},
      {"not an object", Post(*c, "/register_job", json::array({1, 2})), 422, "JSON object"},
      {"world size",
       Post(*c, "/register_job", {{"pp_degree", 2}, {"dp_degree", 2}, {"tp_degree", 1}, {"world_size", 3}}), 422,
       "world_size"},
      {"unknown job", Post(*c, "/register_rank/nope", RankInfoJson(0, 0, 0, 0, freqs)), 404, "unknown job 'nope'"},
      {"rank out of range", Post(*c, "/register_rank/" + id, RankInfoJson(2, 0, 0, 0, freqs)), 422,
       "rank 2 is out of range [0, 2)"},
      {"pp_rank out of range", Post(*c, "/register_rank/" + id, RankInfoJson(1, 0, 5, 0, freqs)), 422, "pp_rank 5"},
      {"duplicate rank", Post(*c, "/register_rank/" + id, RankInfoJson(0, 0, 0, 0, freqs)), 409, "already registered"},
      {"schedule rank out of range", Get(*c, "/schedule/" + id + "?rank=7"), 422, "out of range"},
      {"schedule rank missing", Get(*c, "/schedule/" + id), 422, "'rank' is required"},
      {"schedule rank not a number", Get(*c, "/schedule/" + id + "?rank=x"), 422, "non-negative integer"},
      {"schedule unknown job", Get(*c, "/schedule/nope?rank=0"), 404, "unknown job"},
      {"result unknown rank", Post(*c, "/result/" + id, {{"rank", 9}, {"iter_time", {1.0}}, {"iter_energy", {1.0}}}),
       422, "out of range"},
      {"result wrong type", Post(*c, "/result/" + id, {{"rank", 0}, {"iter_time", "fast"}, {"iter_energy", {1.0}}}),
       422, "iter_time"},
      {"undeclared frequency",
       Post(*c, "/v1/jobs/" + id + "/rank_profiles",
            {{"rank", 0},
             {"dp_rank", 0},
             {"pp_rank", 0},
             {"tp_rank", 0},
             {"forward_time", {{"1410", 0.01}, {"705", 0.03}}},
             {"forward_energy", {{"1410", 1.0}, {"705", 0.9}}},
             {"backward_time", {{"1410", 0.02}}},
             {"backward_energy", {{"1410", 2.0}}}}),
       422, "frequency 705 MHz is not one the rank declared"},
      {"profile CSV with undeclared frequency",
       Put(*c, "/v1/jobs/" + id + "/profile", {{"csv", TestProfileCsv(2, 1000)}}), 422, "did not declare frequency"},
      {"profile CSV garbage", Put(*c, "/v1/jobs/" + id + "/profile", {{"csv", "a,b\n1,2\n"}}), 422, "profile"},
      {"profile CSV stage count", Put(*c, "/v1/jobs/" + id + "/profile", {{"csv", TestProfileCsv(3)}}), 422, "stage"},
      {"straggler dp out of range", Post(*c, "/v1/jobs/" + id + "/stragglers", {{"dp_rank", 4}, {"slowdown", 1.1}}),
       422, "dp_rank 4"},
      {"straggler without kind", Post(*c, "/v1/jobs/" + id + "/stragglers", {{"dp_rank", 0}}), 422, "exactly one"},
      {"plan selection", Put(*c, "/v1/jobs/" + id + "/plan", {{"point", "slowest"}}), 422, "point"},
      {"frontier points before a frontier", Get(*c, "/v1/jobs/" + id + "/frontier/points"), 409, "frontier is none"},
      {"body too large", PostRaw(*c, "/register_job", std::string(100000, ' ')), 413, "too large"},
      {"unknown route", Get(*c, "/v2/anything"), 404, "no such endpoint"},
  };
  for (const Case& k : cases) {
    EXPECT_EQ(k.reply.status, k.status) << k.what << ": " << k.reply.text;
    ASSERT_TRUE(k.reply.body.is_object()) << k.what << ": " << k.reply.text;
    ASSERT_TRUE(k.reply.body.contains("error")) << k.what;
    EXPECT_NE(k.reply.body["error"].get<std::string>().find(k.needle), std::string::npos)
        << k.what << ": " << k.reply.text;
  }

  // A long poll whose peers never ask ends with a 504 naming them; it never hangs.
  auto lonely = Get(*c, "/schedule/" + id + "?rank=0");
  EXPECT_EQ(lonely.status, 504) << lonely.text;
  EXPECT_NE(lonely.text.find("ranks not asking include: 1"), std::string::npos) << lonely.text;
  // A rank that asks twice in the same round is refused while its first request waits.
  std::thread first([&] {
    auto c2 = server.Client();
    EXPECT_EQ(Get(*c2, "/schedule/" + id + "?rank=0").status, 504);
  });
  for (int i = 0; i < 100000 && Get(*c, "/v1/jobs/" + id).body.value("ranks_waiting", 0) == 0; ++i) {
    usleep(1000);
  }
  auto twice = Get(*c, "/schedule/" + id + "?rank=0");
  first.join();
  EXPECT_EQ(twice.status, 409) << twice.text;
  EXPECT_NE(twice.text.find("already waiting"), std::string::npos) << twice.text;

  // Still healthy, and no request ever got a 500.
  EXPECT_EQ(Get(*c, "/healthz").status, 200);
  auto metrics = Get(*c, "/metrics").text;
  EXPECT_EQ(metrics.find("status=\"5"), metrics.find("status=\"504\""));
}

TEST(ServerApi, BearerTokenIsRequiredWhenConfigured) {
  ScopedTempDir dir("token");
  std::string token_file = dir.path() + "/token";
  std::ofstream(token_file) << "s3cret-token\n";
  ServerProcess server({"--token-file", token_file});
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto anonymous = Get(*c, "/v1/jobs");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_NE(anonymous.text.find("Authorization"), std::string::npos);
  EXPECT_EQ(Get(*c, "/no/such/route").status, 401);
  c->set_bearer_token_auth("wrong");
  EXPECT_EQ(Get(*c, "/healthz").status, 401);
  EXPECT_EQ(Post(*c, "/register_job", {{"pp_degree", 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 1}}).status,
            401);
  c->set_bearer_token_auth("s3cret-token");
  EXPECT_EQ(Get(*c, "/v1/jobs").status, 200);
  EXPECT_EQ(Post(*c, "/register_job", {{"pp_degree", 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 1}}).status,
            200);
}

}  // namespace
}  // namespace wattcut::testing

namespace wattcut::testing {
namespace {

// The ranks waiting now, from the job's status (bounded: at most 100,000 naps of 1 ms until it
// is `n`).
int WaitUntilRanksWaiting(httplib::Client& c, const std::string& path, int n) {
  int waiting = -1;
  for (int i = 0; i < 100000; ++i) {
    waiting = Get(c, "/v1/jobs/" + path).body.value("ranks_waiting", -1);
    if (waiting == n) break;
    usleep(1000);
  }
  return waiting;
}

std::string TwoRankJob(httplib::Client& c) {
  auto job = Post(c, "/register_job",
                  {{"pp_degree", 2},
                   {"dp_degree", 1},
                   {"tp_degree", 1},
                   {"world_size", 2},
                   {"planner", {{"num_microbatches", 2}}}});
  EXPECT_EQ(job.status, 200) << job.text;
  std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(
        Post(c, "/register_rank/" + path,
             {{"rank", r}, {"dp_rank", 0}, {"pp_rank", r}, {"tp_rank", 0}, {"available_frequencies", {1410, 1395}}})
            .status,
        200);
  }
  return path;
}

// A waiting rank whose client goes away (its process killed, its connection dropped) leaves the
// round at once: it may ask again, and the round completes when every rank asks.
TEST(ServerApi, ARankWhoseClientWentAwayLeavesTheRound) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const std::string path = TwoRankJob(*c);
  {
    auto gone = server.Client();
    gone->set_read_timeout(0, 200000);  // gives up after 200 ms and closes its connection
    EXPECT_EQ(gone->Get("/schedule/" + path + "?rank=0"), nullptr);
  }
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 0), 0);
  EXPECT_NE(Get(*c, "/metrics").text.find("wattcut_long_polls_waiting 0\n"), std::string::npos);
  HttpReply rank0;
  std::thread asking([&] {
    auto c0 = server.Client();
    rank0 = Get(*c0, "/schedule/" + path + "?rank=0");
  });
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 1), 1);
  auto rank1 = Get(*c, "/schedule/" + path + "?rank=1");
  asking.join();
  EXPECT_EQ(rank0.status, 200) << rank0.text;
  EXPECT_EQ(rank1.status, 200) << rank1.text;
  EXPECT_EQ(rank0.body.value("rank", -1), 0);
  EXPECT_EQ(rank1.body.value("rank", -1), 1);
}

// SIGKILL while ranks wait for a round: their long polls end (the connection is closed, no
// hang); after a restart on the same folder the round they waited for is still to come, and
// the ranks asking again complete it.
TEST(ServerApi, ARoundSurvivesTheServerKilledWhileRanksWait) {
  ScopedTempDir dir("midround");
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  auto c = server->Client();
  const std::string path = TwoRankJob(*c);
  // Round 1 completes; rank 0 then waits for round 2.
  std::thread first([&] { EXPECT_EQ(Get(*server->Client(), "/schedule/" + path + "?rank=0").status, 200); });
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 1), 1);
  EXPECT_EQ(Get(*c, "/schedule/" + path + "?rank=1").status, 200);
  first.join();
  auto waiting_client = server->Client();
  std::optional<int> waited;  // nullopt: no answer, the connection ended
  std::thread rank0([&] {
    auto reply = waiting_client->Get("/schedule/" + path + "?rank=0");
    if (reply) waited = reply->status;
  });
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 1), 1);
  server->Kill();
  rank0.join();
  EXPECT_FALSE(waited.has_value()) << "a killed server answers nothing: " << *waited;

  server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir.path());
  ASSERT_TRUE(server->running()) << server->startup_output();
  c = server->Client();
  json restarted = Get(*c, "/v1/jobs/" + path).body;
  EXPECT_EQ(restarted.value("ranks_waiting", -1), 0);
  EXPECT_EQ(restarted.value("round", -1), 1) << "the completed round is stored";
  HttpReply again;
  std::thread rank0_again([&] { again = Get(*server->Client(), "/schedule/" + path + "?rank=0"); });
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 1), 1);
  auto rank1 = Get(*c, "/schedule/" + path + "?rank=1");
  rank0_again.join();
  EXPECT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(rank1.status, 200) << rank1.text;
  EXPECT_EQ(Get(*c, "/v1/jobs/" + path).body.value("round", -1), 2);
}

// DELETE while a rank waits: the long poll ends with a 410 saying so.
TEST(ServerApi, DeletingAJobAnswersItsWaitingRanks) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  const std::string path = TwoRankJob(*c);
  HttpReply waited;
  std::thread rank0([&] {
    auto c0 = server.Client();
    waited = Get(*c0, "/schedule/" + path + "?rank=0");
  });
  EXPECT_EQ(WaitUntilRanksWaiting(*c, path, 1), 1);
  EXPECT_EQ(Delete(*c, "/v1/jobs/" + path).status, 200);
  rank0.join();
  EXPECT_EQ(waited.status, 410) << waited.text;
  EXPECT_NE(waited.text.find("was deleted while rank waited"), std::string::npos) << waited.text;
  EXPECT_NE(Get(*c, "/metrics").text.find("wattcut_long_polls_waiting 0\n"), std::string::npos);
}

// SIGTERM while a rank waits: the long poll ends with a 503 and the server exits 0.
TEST(ServerApi, StopsCleanlyWithWaitingLongPolls) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  auto job = Post(*c, "/register_job",
                  {{"pp_degree", 2},
                   {"dp_degree", 1},
                   {"tp_degree", 1},
                   {"world_size", 2},
                   {"planner", {{"num_microbatches", 2}}}});
  ASSERT_EQ(job.status, 200);
  std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(
        Post(*c, "/register_rank/" + path,
             {{"rank", r}, {"dp_rank", 0}, {"pp_rank", r}, {"tp_rank", 0}, {"available_frequencies", {1410, 1395}}})
            .status,
        200);
  }
  HttpReply waited;
  std::thread rank0([&] {
    auto c0 = server.Client();
    waited = Get(*c0, "/schedule/" + path + "?rank=0");
  });
  for (int i = 0; i < 100000 && Get(*c, "/v1/jobs/" + path).body.value("ranks_waiting", 0) == 0; ++i) {
    usleep(1000);
  }
  EXPECT_EQ(server.Stop(), 0);
  rank0.join();
  EXPECT_EQ(waited.status, 503) << waited.text;
  EXPECT_NE(waited.text.find("shutting down"), std::string::npos) << waited.text;
}

// A frontier of ~14,000 points (8 stages, 24 microbatches, 0.1 ms unit time) is computed
// in the background: other requests are answered while it is computing.
TEST(ServerApi, LargeFrontierDoesNotStallOtherRequests) {
  ServerProcess server;
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  PlannerOptions o = TestPlannerOptions(24);
  auto job = Post(*c, "/register_job",
                  {{"pp_degree", 8},
                   {"dp_degree", 1},
                   {"tp_degree", 1},
                   {"world_size", 8},
                   {"planner", {{"num_microbatches", 24}, {"unit_time_s", 0.0001}, {"p2p_power_w", o.p2p_power_w}}}});
  ASSERT_EQ(job.status, 200);
  std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/profile", {{"csv", TestProfileCsv(8, 855)}}).status, 202);
  int answered_while_computing = 0;
  std::string state = "computing";
  for (int i = 0; i < 100000 && state == "computing"; ++i) {
    ASSERT_EQ(Get(*c, "/healthz").status, 200);
    ASSERT_EQ(Get(*c, "/v1/jobs").status, 200);
    state = Get(*c, "/v1/jobs/" + path + "/frontier").body.value("state", "");
    if (state == "computing") ++answered_while_computing;
  }
  EXPECT_GT(answered_while_computing, 0);
  ASSERT_EQ(state, "ready");
  auto status = Get(*c, "/v1/jobs/" + path + "/frontier");
  EXPECT_GT(status.body["num_points"].get<int>(), 10000) << status.text;
  auto metrics = Get(*c, "/metrics").text;
  EXPECT_NE(metrics.find("wattcut_frontier_computations_total{outcome=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("wattcut_frontier_computation_seconds_count 1\n"), std::string::npos);
}

}  // namespace
}  // namespace wattcut::testing
