#include "wattcut/runtime/plan_server_client.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <thread>

#include "wattcut/runtime/test_plan_server.h"

namespace wattcut {
namespace {

TEST(PlanServerClient, RejectsAddressesItCannotUse) {
  for (const char* url :
       {"localhost:7787", "ftp://h:1", "http://", "http://h:0", "http://h:70000", "http://h:x", "http://h:1/path"}) {
    auto client = PlanServerClient::Create({.url = url});
    ASSERT_FALSE(client.ok()) << url;
    EXPECT_NE(client.error().message.find("expected http://HOST:PORT"), std::string::npos) << client.error().message;
  }
  auto https = PlanServerClient::Create({.url = "https://h:443"});
  ASSERT_FALSE(https.ok());
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  auto ok = PlanServerClient::Create({.url = "http://127.0.0.1:7787/"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->url(), "http://127.0.0.1:7787");
}

TEST(PlanServerClient, SaysWhenTheServerCannotBeReached) {
  // A port nobody listens on: bind one, note it, close it.
  auto client = PlanServerClient::Create({.url = "http://127.0.0.1:1", .connect_timeout_s = 2});
  ASSERT_TRUE(client.ok());
  auto id = client->RegisterJob({});
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().message.find("POST /register_job: cannot reach the wattcut server at http://127.0.0.1:1"),
            std::string::npos)
      << id.error().message;
}

TEST(PlanServerClient, EncodesJobIdsForPaths) {
  EXPECT_EQ(EncodeJobIdForPath("20261130+job a/b"), "20261130%2Bjob%20a%2Fb");
  EXPECT_EQ(EncodeJobIdForPath("plain-id_1.x~"), "plain-id_1.x~");
}

TEST(PlanServerClient, TalksToARealServer) {
  testing::TestPlanServer server;
  auto client = PlanServerClient::Create({.url = server.url()});
  ASSERT_TRUE(client.ok());
  auto job =
      client->RegisterJob({.pp_degree = 2, .world_size = 2, .job_metadata = "client-test", .num_microbatches = 2});
  ASSERT_TRUE(job.ok()) << job.error().message;
  EXPECT_NE(job->find("client-test"), std::string::npos) << *job;

  const std::vector<int> freqs = {1410, 1200, 1000};
  ASSERT_TRUE(client->RegisterRank(*job, {.rank = 0, .pp_rank = 0}, freqs).ok());
  ASSERT_TRUE(client->RegisterRank(*job, {.rank = 1, .pp_rank = 1}, freqs).ok());
  Status twice = client->RegisterRank(*job, {.rank = 1, .pp_rank = 1}, freqs);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("HTTP 409: job '" + *job + "': rank 1 is already registered"), std::string::npos)
      << twice.error().message;

  // Each rank's long poll returns when both asked: the profile upload below makes the
  // schedules AllMax (profile known, frontier computing or ready).
  std::vector<ProfiledRow> rows;
  for (int f : freqs) {
    const double slow = 1410.0 / f;
    rows.push_back({.instruction = "forward", .freq_mhz = f, .time_s = 0.01 * slow, .energy_j = 2.0 / slow});
    rows.push_back({.instruction = "backward", .freq_mhz = f, .time_s = 0.02 * slow, .energy_j = 4.0 / slow});
  }
  ASSERT_TRUE(client->UploadRankProfile(*job, {.rank = 0, .pp_rank = 0}, rows).ok());
  ASSERT_TRUE(client->UploadRankProfile(*job, {.rank = 1, .pp_rank = 1}, rows).ok());
  Result<RankSchedule> first = Error{""};
  std::thread other([&] { first = client->FetchSchedule(*job, 0, 30); });
  auto second = client->FetchSchedule(*job, 1, 30);
  other.join();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(first->entries.size(), 4u);  // 2 forwards + 2 backwards
  EXPECT_EQ(first->entries.front().instruction, "forward");

  // Unknown job, bad straggler reports: the server's message comes through.
  auto missing = client->FetchSchedule("no-such-job", 0, 5);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("HTTP 404"), std::string::npos) << missing.error().message;
  Status none = client->ReportStraggler(*job, {.dp_rank = 0});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("exactly one of"), std::string::npos);
  Status out_of_range = client->ReportStraggler(*job, {.dp_rank = 5, .slowdown = 1.2});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.error().message.find("HTTP 422"), std::string::npos) << out_of_range.error().message;
  EXPECT_TRUE(client->ReportStraggler(*job, {.dp_rank = 0, .slowdown = 1.2}).ok());
  EXPECT_TRUE(client->ReportStraggler(*job, {.dp_rank = 0, .recovered = true}).ok());
}

// The deployment endpoint: nothing deployed before a profile, a checked answer, and each refusal
// with the code the rank's background thread acts on.
TEST(PlanServerClient, FetchesTheRanksDeploymentWithoutWaiting) {
  testing::TestPlanServer server;
  auto client = PlanServerClient::Create({.url = server.url()});
  ASSERT_TRUE(client.ok());
  auto job = client->RegisterJob({.pp_degree = 2, .world_size = 2, .num_microbatches = 2});
  ASSERT_TRUE(job.ok()) << job.error().message;
  const std::vector<int> freqs = {1410, 1200, 1000};

  auto unregistered = client->FetchDeployment(*job, 0, 0, 0);
  ASSERT_FALSE(unregistered.ok());
  EXPECT_EQ(unregistered.error().code, ErrorCode::kConflict) << unregistered.error().message;
  EXPECT_NE(unregistered.error().message.find("GET /v1/jobs/"), std::string::npos) << unregistered.error().message;

  ASSERT_TRUE(client->RegisterRank(*job, {.rank = 0, .pp_rank = 0}, freqs).ok());
  auto nothing_yet = client->FetchDeployment(*job, 0, 0, 0);
  ASSERT_TRUE(nothing_yet.ok()) << nothing_yet.error().message;
  EXPECT_EQ(nothing_yet->version, 0u);
  EXPECT_GT(nothing_yet->poll_interval_s, 0);
  EXPECT_FALSE(nothing_yet->change.has_value());

  // A rank that claims a version the server never had gets the server's own.
  auto corrected = client->FetchDeployment(*job, 0, 3, 99);
  ASSERT_TRUE(corrected.ok()) << corrected.error().message;
  ASSERT_TRUE(corrected->change.has_value());
  EXPECT_EQ(corrected->change->version, corrected->version);

  auto missing = client->FetchDeployment("no-such-job", 0, 0, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound) << missing.error().message;
  auto out_of_range = client->FetchDeployment(*job, 7, 0, 0);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.error().code, ErrorCode::kInvalidArgument) << out_of_range.error().message;

  auto unreachable = PlanServerClient::Create({.url = "http://127.0.0.1:1", .connect_timeout_s = 2});
  auto down = unreachable->FetchDeployment(*job, 0, 0, 0);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable) << down.error().message;
}

TEST(PlanServerClient, RefusesToUploadAnIncompleteProfile) {
  testing::TestPlanServer server;
  auto client = PlanServerClient::Create({.url = server.url()});
  ASSERT_TRUE(client.ok());
  Status s =
      client->UploadRankProfile("job", {}, {{.instruction = "forward", .freq_mhz = 1410, .time_s = 1, .energy_j = 1}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("no backward measurements"), std::string::npos) << s.error().message;
  Status other = client->UploadRankProfile("job", {}, {{.instruction = "optimizer", .freq_mhz = 1410}});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("instruction 'optimizer' cannot be uploaded"), std::string::npos);
}

// A zero-bubble rank measures backward_input and backward_weight: the server stores their
// sum as the backward (and its planner splits it again).
TEST(PlanServerClient, UploadsASplitBackwardAsItsSum) {
  const std::vector<ProfiledRow> rows = {
      {.instruction = "forward", .freq_mhz = 1410, .time_s = 1, .energy_j = 10},
      {.instruction = "backward_input", .freq_mhz = 1410, .time_s = 1.5, .energy_j = 15},
      {.instruction = "backward_weight", .freq_mhz = 1410, .time_s = 0.5, .energy_j = 6},
  };
  Result<std::string> body = RankProfileJson({.rank = 2, .pp_rank = 1}, rows);
  ASSERT_TRUE(body.ok()) << body.error().message;
  const nlohmann::json j = nlohmann::json::parse(*body);
  EXPECT_DOUBLE_EQ(j["backward_time"]["1410"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["backward_energy"]["1410"].get<double>(), 21.0);
  Result<std::string> half = RankProfileJson({}, {rows[0], rows[1]});
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().message,
            "rank profile: 1410 MHz has only one of backward_input and backward_weight (a split backward needs both)");
}

}  // namespace
}  // namespace wattcut
