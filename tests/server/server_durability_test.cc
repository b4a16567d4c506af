// Durability: SIGKILL the server in the middle of a busy run of many clients, restart
// it on the same data folder, and find every acknowledged write intact and the jobs
// continuing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

constexpr int kClients = 8;
constexpr int kJobsPerClient = 1000;  // more than a client gets through before the kill
// Each job a client registers: pp 2 x dp 2, 4 microbatches.
constexpr int kClientJobPp = 2, kClientJobDp = 2, kClientJobWorld = kClientJobPp * kClientJobDp,
              kClientJobMicrobatches = 4;

// What one client had acknowledged for one job, and what it tried after that.
struct JobRecord {
  std::string id;
  int ranks_acked = 0;                 // ranks 0..ranks_acked-1 registered (2xx)
  int results_acked = 0;               // ranks 0..results_acked-1 posted a result (2xx)
  std::optional<int> index_acked;      // last acknowledged plan selection
  std::optional<int> index_attempted;  // a later selection whose reply never came
  std::optional<double> slowdown_acked;
  std::optional<double> slowdown_attempted;
};

TEST(ServerDurability, SigkillDuringBusyRunKeepsEveryAcknowledgedWrite) {
  ScopedTempDir scoped_dir("durable");  // outlives the servers below
  const std::string& dir = scoped_dir.path();
  auto server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir);
  ASSERT_TRUE(server->running()) << server->startup_output();
  std::vector<int> freqs = TestFrequencies();

  std::mutex mu;
  std::vector<JobRecord> records;
  std::atomic<int> acks{0};
  std::atomic<bool> stop{false};

  auto client_loop = [&](int client_index) {
    auto c = server->Client();
    for (int j = 0; j < kJobsPerClient && !stop; ++j) {
      auto reply = Post(*c, "/register_job",
                        {{"pp_degree", kClientJobPp},
                         {"dp_degree", kClientJobDp},
                         {"tp_degree", 1},
                         {"world_size", kClientJobWorld},
                         {"job_metadata", "client" + std::to_string(client_index)},
                         {"planner", {{"num_microbatches", kClientJobMicrobatches}}}});
      if (reply.status != 200) return;  // the server is gone
      ++acks;
      JobRecord rec;
      rec.id = reply.body.get<std::string>();
      auto save = [&] {
        std::lock_guard lock(mu);
        records.push_back(rec);
      };
      std::string path = EncodeJobIdForPath(rec.id);
      for (int r = 0; r < kClientJobWorld; ++r) {
        json info = {{"rank", r},
                     {"dp_rank", r / kClientJobPp},
                     {"pp_rank", r % kClientJobPp},
                     {"tp_rank", 0},
                     {"available_frequencies", freqs}};
        if (Post(*c, "/register_rank/" + path, info).status != 200) return save();
        rec.ranks_acked = r + 1;
        ++acks;
      }
      for (int r = 0; r < kClientJobWorld; ++r) {
        json result = {{"rank", r}, {"iter_time", {1.0 + r}}, {"iter_energy", {100.0 * r}}};
        if (Post(*c, "/result/" + path, result).status != 200) return save();
        rec.results_acked = r + 1;
        ++acks;
      }
      for (int i = 0; i < 3; ++i) {
        rec.index_attempted = i + j;
        if (Put(*c, "/v1/jobs/" + path + "/plan", {{"index", i + j}}).status != 200) return save();
        rec.index_acked = i + j;
        rec.index_attempted.reset();
        ++acks;
        double slowdown = 1.0 + 0.01 * (i + 1);
        rec.slowdown_attempted = slowdown;
        if (Post(*c, "/v1/jobs/" + path + "/stragglers", {{"dp_rank", 1}, {"slowdown", slowdown}}).status != 200) {
          return save();
        }
        rec.slowdown_acked = slowdown;
        rec.slowdown_attempted.reset();
        ++acks;
      }
      save();
    }
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) threads.emplace_back(client_loop, i);
  // Kill once the run is well under way (bounded: the clients stop on their own after
  // kJobsPerClient jobs each).
  for (int i = 0; i < 1000000 && acks < 400; ++i) usleep(1000);
  server->Kill();
  stop = true;
  for (auto& t : threads) t.join();
  ASSERT_GE(acks.load(), 400);

  // Restart on the same data folder.
  server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir);
  ASSERT_TRUE(server->running()) << server->startup_output();
  auto c = server->Client();
  ASSERT_FALSE(records.empty());
  for (const JobRecord& rec : records) {
    auto job = Get(*c, "/v1/jobs/" + EncodeJobIdForPath(rec.id));
    ASSERT_EQ(job.status, 200) << rec.id << ": " << job.text;
    EXPECT_GE(job.body["ranks_registered"].get<int>(), rec.ranks_acked) << rec.id;
    EXPECT_GE(job.body["ranks_with_results"].get<int>(), rec.results_acked) << rec.id;
    if (rec.index_acked) {
      int stored = job.body["selection"].value("index", -1);
      bool ok = stored == *rec.index_acked || (rec.index_attempted && stored == *rec.index_attempted);
      EXPECT_TRUE(ok) << rec.id << ": selection " << job.body["selection"].dump() << ", acked " << *rec.index_acked;
    }
    if (rec.slowdown_acked) {
      auto stragglers = job.body["state"]["stragglers"];
      ASSERT_EQ(stragglers.size(), 1u) << rec.id;
      double stored = stragglers[0]["slowdown"].get<double>();
      bool ok = stored == *rec.slowdown_acked || (rec.slowdown_attempted && stored == *rec.slowdown_attempted);
      EXPECT_TRUE(ok) << rec.id << ": slowdown " << stored;
    }
  }
  // Sequence numbers are never reused: a new job gets a fresh id.
  auto fresh = Post(*c, "/register_job", {{"pp_degree", 1}, {"dp_degree", 1}, {"tp_degree", 1}, {"world_size", 1}});
  ASSERT_EQ(fresh.status, 200);
  for (const JobRecord& rec : records) EXPECT_NE(rec.id, fresh.body.get<std::string>());

  // The jobs continue: take a fully registered job, plan it, and serve all its ranks.
  const JobRecord* full = nullptr;
  for (const JobRecord& rec : records) {
    if (rec.ranks_acked == kClientJobWorld) full = &rec;
  }
  ASSERT_NE(full, nullptr);
  std::string path = EncodeJobIdForPath(full->id);
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/plan", {{"point", "fastest"}}).status, 200);
  ASSERT_EQ(Post(*c, "/v1/jobs/" + path + "/stragglers", {{"dp_rank", 1}, {"recovered", true}}).status, 200);
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/profile", {{"csv", TestProfileCsv(kClientJobPp)}}).status, 202);
  ASSERT_EQ(WaitForFrontier(*c, path).value("state", ""), "ready");
  Frontier expected = TestFrontier(kClientJobPp, kClientJobMicrobatches);
  std::vector<std::thread> ranks;
  for (int r = 0; r < kClientJobWorld; ++r) {
    ranks.emplace_back([&, r] {
      auto rc = server->Client();
      auto reply = Get(*rc, "/schedule/" + path + "?rank=" + std::to_string(r));
      ASSERT_EQ(reply.status, 200) << reply.text;
      EXPECT_EQ(reply.body["frequencies"].dump(),
                StageScheduleJson(expected, expected.fastest_index(), r % kClientJobPp));
    });
  }
  for (auto& t : ranks) t.join();

  // And the planned job survives a second restart: its frontier is recomputed from the
  // stored profile, and the plan selection is kept.
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/plan", {{"point", "min_energy"}}).status, 200);
  server->Kill();
  server = std::make_unique<ServerProcess>(std::vector<std::string>{}, dir);
  ASSERT_TRUE(server->running()) << server->startup_output();
  c = server->Client();
  json status = WaitForFrontier(*c, path);
  ASSERT_EQ(status.value("state", ""), "ready");
  EXPECT_EQ(status["selected"]["index"].get<size_t>(), expected.min_energy_index());
}

}  // namespace
}  // namespace wattcut::testing
