// Compatibility: a client written from the Zeus JSON shapes alone (zeus_client.h) runs
// a whole job against `wattcut serve`: registration, the server-run profiling sweep
// (every instruction at one frequency per round, highest first), results, and then the
// planned schedules. The server is configured by its operator (--microbatches,
// --p2p-power), as a Zeus server would be; the ranks send nothing wattcut-specific.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <thread>

#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "tests/server/zeus_client.h"
#include "wattcut/profile/profile_csv.h"

namespace wattcut::testing {
namespace {

TEST(ZeusCompat, ZeusClientProfilesAndGetsPlannedSchedules) {
  constexpr int kPp = 4, kDp = 2, kTp = 1, kWorld = kPp * kDp * kTp, kMicrobatches = 4;
  constexpr int kFloorMhz = 1335;  // the ranks' GPUs offer 1410..1335 MHz: 6 frequencies
  PlannerOptions options = TestPlannerOptions(kMicrobatches);
  char p2p[64];
  std::snprintf(p2p, sizeof(p2p), "%.17g", options.p2p_power_w);
  ServerProcess server({"--microbatches", std::to_string(kMicrobatches), "--p2p-power", p2p});
  ASSERT_TRUE(server.running()) << server.startup_output();

  // What each simulated GPU measures: the modelled stage profile.
  auto profile = ParseProfileCsv(TestProfileCsv(kPp, kFloorMhz), "model", kPp);
  ASSERT_TRUE(profile.ok());
  Frontier expected = TestFrontier(kPp, kMicrobatches, kFloorMhz);
  std::vector<int> freqs = TestFrequencies(kFloorMhz);

  std::vector<std::unique_ptr<zeus_shapes::Client>> clients;
  for (int r = 0; r < kWorld; ++r) {
    clients.push_back(std::make_unique<zeus_shapes::Client>("127.0.0.1", server.port()));
  }
  auto job_id = clients[0]->RegisterJob({kPp, kDp, kTp, kWorld, "zeus-compat"});
  ASSERT_TRUE(job_id.has_value()) << clients[0]->last_error();
  for (int r = 0; r < kWorld; ++r) {
    int pp = r % kPp, dp = r / kPp;
    ASSERT_TRUE(clients[r]->RegisterRank(*job_id, {r, dp, pp, 0, freqs})) << clients[r]->last_error();
  }

  auto measure = [&](int stage, InstructionKind kind, int freq) {
    for (const Measurement& m : profile->measurements(stage, kind)) {
      if (m.freq_mhz == freq) return m;
    }
    ADD_FAILURE() << "no measurement at " << freq;
    return Measurement{};
  };

  // One training iteration window per round: fetch, "run", report.
  auto round = [&](std::vector<zeus_shapes::FrequencySchedule>& out) {
    out.assign(kWorld, {});
    std::vector<std::thread> threads;
    for (int r = 0; r < kWorld; ++r) {
      threads.emplace_back([&, r] {
        auto schedule = clients[r]->GetSchedule(*job_id, r);
        ASSERT_TRUE(schedule.has_value()) << clients[r]->last_error();
        ASSERT_EQ(schedule->rank, r);
        ASSERT_EQ(schedule->frequencies.size(), 2u * kMicrobatches);
        zeus_shapes::ProfilingResult result{r, {}, {}, {}, {}};
        std::vector<double> ft, fe, bt, be;
        double total_t = 0, total_e = 0;
        for (const auto& [instruction, freq] : schedule->frequencies) {
          bool forward = instruction == "forward";
          ASSERT_TRUE(forward || instruction == "backward") << instruction;
          Measurement m = measure(r % kPp, forward ? InstructionKind::kForward : InstructionKind::kBackward, freq);
          (forward ? ft : bt).push_back(m.time_s);
          (forward ? fe : be).push_back(m.energy_j);
          total_t += m.time_s;
          total_e += m.energy_j;
        }
        result.iter_time = {total_t};
        result.iter_energy = {total_e};
        result.time_breakdown = {{"forward", {ft}}, {"backward", {bt}}};
        result.energy_breakdown = {{"forward", {fe}}, {"backward", {be}}};
        EXPECT_TRUE(clients[r]->ReportResult(*job_id, result)) << clients[r]->last_error();
        out[r] = *schedule;
      });
    }
    for (auto& t : threads) t.join();
  };

  // The profiling sweep: one frequency per round, every instruction of every rank.
  std::vector<zeus_shapes::FrequencySchedule> schedules;
  for (int freq : freqs) {
    round(schedules);
    for (const auto& s : schedules) {
      for (const auto& [instruction, f] : s.frequencies) ASSERT_EQ(f, freq) << "rank " << s.rank;
    }
  }

  // The frontier is computed in the background from the ranks' results; meanwhile the
  // ranks keep training at their highest frequency. Watch it with a separate client.
  auto admin = server.Client();
  ASSERT_EQ(WaitForFrontier(*admin, EncodeJobIdForPath(*job_id)).value("state", ""), "ready");

  round(schedules);
  size_t fastest = expected.fastest_index();
  for (int r = 0; r < kWorld; ++r) {
    nlohmann::json got = nlohmann::json::array();
    for (const auto& [instruction, f] : schedules[r].frequencies) got.push_back({instruction, f});
    EXPECT_EQ(got.dump(), StageScheduleJson(expected, fastest, r % kPp)) << "rank " << r;
  }
  auto job = Get(*admin, "/v1/jobs/" + EncodeJobIdForPath(*job_id));
  EXPECT_EQ(job.body["profile_source"], "server_profiling");
  EXPECT_EQ(job.body["ranks_with_results"], kWorld);
}

}  // namespace
}  // namespace wattcut::testing
