#include "wattcut/runtime/plan_server_client.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <thread>

#include "wattcut/runtime/test_plan_server.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/server.h"

namespace wattcut {
namespace {

TEST(PlanServerClient, RejectsAddressesItCannotUse) {
  for (const char* url :
       {"localhost:7787", "ftp://h:1", "http://", "http://h:0", "http://h:70000", "http://h:x", "http://h:1/path"}) {
    auto client = PlanServerClient::Create({.url = url});
    ASSERT_FALSE(client.ok()) << url;
    EXPECT_NE(client.error().message.find("expected http://HOST[:PORT]"), std::string::npos) << client.error().message;
  }
  auto https = PlanServerClient::Create({.url = "https://h:443"});
  ASSERT_FALSE(https.ok());
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  auto ok = PlanServerClient::Create({.url = "http://127.0.0.1:7787/"});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->url(), "http://127.0.0.1:7787");
  // Port 80 where the URL names none; an IPv6 address in brackets.
  EXPECT_TRUE(PlanServerClient::Create({.url = "http://planner.example"}).ok());
  EXPECT_TRUE(PlanServerClient::Create({.url = "http://[::1]:7787"}).ok());
}

// An IPv6 server is reached through its bracketed URL (the brackets are the URL's, not the host's).
TEST(PlanServerClient, ReachesAServerOnIpv6Loopback) {
  std::string dir = (std::filesystem::temp_directory_path() / "wattcut-client-v6-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  server::ServerOptions options;
  options.host = "::1";
  options.port = 0;
  options.data_dir = dir;
  options.sync = server::SyncMode::kNormal;
  options.http_threads = 4;
  auto created = server::Server::Create(options);
  if (!created.ok()) {
    std::filesystem::remove_all(dir);
    GTEST_SKIP() << "no IPv6 loopback here: " << created.error().message;
  }
  std::thread run([&] { (*created)->Run(); });
  auto client = PlanServerClient::Create({.url = "http://[::1]:" + std::to_string((*created)->port())});
  ASSERT_TRUE(client.ok()) << client.error().message;
  auto job = client->RegisterJob({.pp_degree = 1, .dp_degree = 1, .world_size = 1, .num_microbatches = 1});
  EXPECT_TRUE(job.ok()) << job.error().message;
  (*created)->Stop();
  run.join();
  std::filesystem::remove_all(dir);
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

// A zero-bubble rank measures backward_input and backward_weight: both go to the server as
// measured (their ratio is planned), not their sum; a whole backward goes as before.
TEST(PlanServerClient, UploadsASplitBackwardAsMeasured) {
  const std::vector<ProfiledRow> rows = {
      {.instruction = "forward", .freq_mhz = 1410, .time_s = 1, .energy_j = 10},
      {.instruction = "backward_input", .freq_mhz = 1410, .time_s = 0.8, .energy_j = 8.4},
      {.instruction = "backward_weight", .freq_mhz = 1410, .time_s = 1.2, .energy_j = 12.6},
      {.instruction = "forward", .freq_mhz = 900, .time_s = 1.5, .energy_j = 9},
      {.instruction = "backward_input", .freq_mhz = 900, .time_s = 1.2, .energy_j = 7.2},
      {.instruction = "backward_weight", .freq_mhz = 900, .time_s = 1.8, .energy_j = 10.8},
  };
  Result<std::string> body = RankProfileJson({.rank = 2, .pp_rank = 1}, rows);
  ASSERT_TRUE(body.ok()) << body.error().message;
  const nlohmann::json j = nlohmann::json::parse(*body);
  EXPECT_EQ(j["backward_input_time"], nlohmann::json::parse(R"({"1410": 0.8, "900": 1.2})"));
  EXPECT_EQ(j["backward_input_energy"], nlohmann::json::parse(R"({"1410": 8.4, "900": 7.2})"));
  EXPECT_EQ(j["backward_weight_time"], nlohmann::json::parse(R"({"1410": 1.2, "900": 1.8})"));
  EXPECT_EQ(j["backward_weight_energy"], nlohmann::json::parse(R"({"1410": 12.6, "900": 10.8})"));
  EXPECT_FALSE(j.contains("backward_time")) << "no whole backward was measured";
  EXPECT_FALSE(j.contains("backward_energy"));
  EXPECT_EQ(j["forward_time"], nlohmann::json::parse(R"({"1410": 1.0, "900": 1.5})"));
  EXPECT_EQ(j["pp_rank"], 1);

  // A 1F1B rank's profile has no split fields.
  Result<std::string> whole =
      RankProfileJson({}, {rows[0], {.instruction = "backward", .freq_mhz = 1410, .time_s = 2, .energy_j = 21}});
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  const nlohmann::json w = nlohmann::json::parse(*whole);
  EXPECT_EQ(w["backward_time"]["1410"], 2.0);
  EXPECT_FALSE(w.contains("backward_input_time"));
  EXPECT_FALSE(w.contains("backward_weight_energy"));

  for (const auto& half : {std::vector<ProfiledRow>{rows[0], rows[1]}, std::vector<ProfiledRow>{rows[0], rows[2]}}) {
    Result<std::string> refused = RankProfileJson({}, half);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "rank profile: 1410 MHz has only one of backward_input and backward_weight (a split backward needs "
              "both)");
  }
  Result<std::string> no_forward = RankProfileJson({}, {rows[1], rows[2]});
  ASSERT_FALSE(no_forward.ok());
  EXPECT_EQ(no_forward.error().message, "rank profile: no forward measurements to upload");
}

// What the rank uploads is what the planning server parses, split included.
TEST(PlanServerClient, TheServerParsesTheSplitItUploads) {
  const std::vector<ProfiledRow> rows = {
      {.instruction = "forward", .freq_mhz = 1410, .time_s = 1, .energy_j = 10},
      {.instruction = "backward_input", .freq_mhz = 1410, .time_s = 0.8, .energy_j = 8.4},
      {.instruction = "backward_weight", .freq_mhz = 1410, .time_s = 1.2, .energy_j = 12.6},
  };
  Result<std::string> body = RankProfileJson({.rank = 0}, rows);
  ASSERT_TRUE(body.ok()) << body.error().message;
  auto parsed = server::RankProfileFromJson(nlohmann::json::parse(*body));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->backward_input_time.at(1410), 0.8);
  EXPECT_EQ(parsed->backward_weight_energy.at(1410), 12.6);
  EXPECT_TRUE(parsed->backward_time.empty());
}

}  // namespace
}  // namespace wattcut
