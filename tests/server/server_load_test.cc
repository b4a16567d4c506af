// Load: one job of 8 stages x 16 dp x 8 tp = 1,024 simulated ranks register and
// long-poll at once on loopback; every rank must be served its stage's schedule, and while
// 1,023 of them wait the server holds no thread for them (at most 64 in all).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"

namespace wattcut::testing {
namespace {

using nlohmann::json;

TEST(ServerLoad, ThousandRanksRegisterAndLongPollAtOnce) {
  constexpr int kPp = 8, kDp = 16, kTp = 8, kWorld = kPp * kDp * kTp, kMicrobatches = 8;
  ServerProcess server;  // default --sync full: every registration is fsynced
  ASSERT_TRUE(server.running()) << server.startup_output();
  auto c = server.Client();
  PlannerOptions options = TestPlannerOptions(kMicrobatches);
  auto job = Post(*c, "/register_job",
                  {{"pp_degree", kPp},
                   {"dp_degree", kDp},
                   {"tp_degree", kTp},
                   {"world_size", kWorld},
                   {"planner", {{"num_microbatches", kMicrobatches}, {"p2p_power_w", options.p2p_power_w}}}});
  ASSERT_EQ(job.status, 200) << job.text;
  std::string path = EncodeJobIdForPath(job.body.get<std::string>());
  ASSERT_EQ(Put(*c, "/v1/jobs/" + path + "/profile", {{"csv", TestProfileCsv(kPp)}}).status, 202);
  ASSERT_EQ(WaitForFrontier(*c, path, /*max_polls=*/30000).value("state", ""), "ready");
  Frontier expected = TestFrontier(kPp, kMicrobatches);
  std::vector<std::string> stage_schedules;
  for (int s = 0; s < kPp; ++s) {
    stage_schedules.push_back(StageScheduleJson(expected, expected.fastest_index(), s));
  }

  std::vector<int> freqs = TestFrequencies();
  std::atomic<int> served_right{0};
  std::atomic<bool> last_may_ask{false};
  std::vector<std::string> failures(kWorld);
  std::vector<std::thread> ranks;
  ranks.reserve(kWorld);
  for (int r = 0; r < kWorld; ++r) {
    ranks.emplace_back([&, r] {
      int tp = r % kTp, pp = (r / kTp) % kPp, dp = r / (kTp * kPp);
      auto rc = server.Client();
      json info = {{"rank", r}, {"dp_rank", dp}, {"pp_rank", pp}, {"tp_rank", tp}, {"available_frequencies", freqs}};
      auto reg = Post(*rc, "/register_rank/" + path, info);
      if (reg.status != 200) {
        failures[r] = "register: " + std::to_string(reg.status) + " " + reg.text;
        return;
      }
      // Ranks that ask before everyone has registered simply wait longer. The last rank asks
      // once the others wait (bounded: 60,000 naps of 1 ms, then it asks anyway).
      for (int nap = 0; r == kWorld - 1 && !last_may_ask && nap < 60000; ++nap) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      auto reply = Get(*rc, "/schedule/" + path + "?rank=" + std::to_string(r));
      if (reply.status != 200 || reply.body["rank"] != r || reply.body["frequencies"].dump() != stage_schedules[pp]) {
        failures[r] = "schedule: " + std::to_string(reply.status) + " " + reply.text.substr(0, 200);
        return;
      }
      ++served_right;
    });
  }
  // While 1,023 ranks wait for the last one, the server's threads: its workers (16), the
  // reactor, the listener and its timers, not one per waiting rank.
  std::string waiting;
  for (int poll = 0; poll < 6000; ++poll) {
    waiting = Get(*c, "/metrics").text;
    if (waiting.find("wattcut_long_polls_waiting " + std::to_string(kWorld - 1) + "\n") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_NE(waiting.find("wattcut_long_polls_waiting " + std::to_string(kWorld - 1) + "\n"), std::string::npos);
  const int threads_while_waiting = ThreadCount(server.pid());
  EXPECT_GT(threads_while_waiting, 0);
  EXPECT_LE(threads_while_waiting, 64) << "threads while " << kWorld - 1 << " ranks wait";
  last_may_ask = true;
  for (auto& t : ranks) t.join();
  for (int r = 0; r < kWorld; ++r) EXPECT_TRUE(failures[r].empty()) << "rank " << r << ": " << failures[r];
  EXPECT_EQ(served_right.load(), kWorld);
  auto metrics = Get(*c, "/metrics").text;
  EXPECT_NE(metrics.find("wattcut_ranks 1024\n"), std::string::npos);
  EXPECT_NE(metrics.find("wattcut_http_requests_total{endpoint=\"schedule\",method=\"GET\",status="
                         "\"200\"} 1024\n"),
            std::string::npos);
}

}  // namespace
}  // namespace wattcut::testing
