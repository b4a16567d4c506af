// Compatibility: a client written from the Zeus JSON shapes alone (zeus_client.h) runs
// a whole job against `wattcut serve`: registration, the server-run profiling sweep
// (every instruction at one frequency per round, highest first), results, and then the
// planned schedules. The server is configured by its operator (--microbatches,
// --p2p-power), as a Zeus server would be; the ranks send nothing wattcut-specific.
//
// Zeus's own PipelineFrequencyOptimizer does less: each rank registers and fetches its
// schedule once, in its constructor, and never reports a result. With a start-up profile
// (--profile-for-new-jobs) that one fetch is the plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

// What PipelineFrequencyOptimizer.__init__ does on every rank of a job (zeus/optimizer/
// pipeline_frequency/optimizer.py): rank 0 registers the job and shares its id, each rank
// registers itself with its GPU's clocks (highest first) and fetches its schedule once.
// Ranks are numbered as Megatron does (rank = dp_rank * pp + pp_rank, tp 1). Returns each
// rank's schedule (rank -1 where the rank failed, with the reason in `errors`).
std::vector<zeus_shapes::FrequencySchedule> StartZeusRanks(int port, const zeus_shapes::JobInfo& info,
                                                           const std::vector<int>& freqs, std::string& job_id,
                                                           std::vector<std::string>& errors) {
  const int world = info.world_size;
  std::vector<zeus_shapes::FrequencySchedule> schedules(static_cast<size_t>(world));
  errors.assign(static_cast<size_t>(world), "");
  zeus_shapes::Client master("127.0.0.1", port);
  auto id = master.RegisterJob(info);
  if (!id) {
    errors[0] = "register_job: " + master.last_error();
    return schedules;
  }
  job_id = *id;
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      zeus_shapes::Client client("127.0.0.1", port);
      const int pp = r % info.pp_degree, dp = r / info.pp_degree;
      schedules[static_cast<size_t>(r)].rank = -1;
      if (!client.RegisterRank(job_id, {r, dp, pp, 0, freqs})) {
        errors[static_cast<size_t>(r)] = "register_rank: " + client.last_error();
        return;
      }
      auto schedule = client.GetSchedule(job_id, r);
      if (!schedule) {
        errors[static_cast<size_t>(r)] = "schedule: " + client.last_error();
        return;
      }
      schedules[static_cast<size_t>(r)] = *schedule;
    });
  }
  for (auto& t : ranks) t.join();
  return schedules;
}

nlohmann::json ScheduleJson(const zeus_shapes::FrequencySchedule& schedule) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [instruction, f] : schedule.frequencies) out.push_back({instruction, f});
  return out;
}

TEST(ZeusCompat, ZeusClientsOneFetchIsThePlanOfTheStartupProfile) {
  constexpr int kPp = 4, kDp = 2, kWorld = kPp * kDp, kMicrobatches = 4;
  constexpr int kFloorMhz = 1335;
  ScopedTempDir files("startup_profiles");
  const std::string four = files.path() + "/gpt-4-stages.csv";
  const std::string three = files.path() + "/gpt-3-stages.csv";
  std::ofstream(four) << TestProfileCsv(kPp, kFloorMhz);
  std::ofstream(three) << TestProfileCsv(3, kFloorMhz);
  char p2p[64];
  std::snprintf(p2p, sizeof(p2p), "%.17g", TestPlannerOptions(kMicrobatches).p2p_power_w);
  ServerProcess server({"--microbatches", std::to_string(kMicrobatches), "--p2p-power", p2p, "--profile-for-new-jobs",
                        four, "--profile-for-new-jobs", three});
  ASSERT_TRUE(server.running()) << server.startup_output();
  const Frontier expected = TestFrontier(kPp, kMicrobatches, kFloorMhz);
  // Computed before listening, and said so.
  EXPECT_NE(server.startup_output().find("wattcut serve: " + four + ": 4 stages, " +
                                         std::to_string(expected.points().size()) + " frontier points computed in "),
            std::string::npos)
      << server.startup_output();
  EXPECT_NE(server.startup_output().find("wattcut serve: " + three + ": 3 stages, "), std::string::npos)
      << server.startup_output();

  std::string job_id;
  std::vector<std::string> errors;
  auto schedules =
      StartZeusRanks(server.port(), {kPp, kDp, 1, kWorld, "zeus-startup"}, TestFrequencies(kFloorMhz), job_id, errors);
  const size_t fastest = expected.fastest_index();
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
    EXPECT_EQ(schedules[static_cast<size_t>(r)].rank, r);
    EXPECT_EQ(ScheduleJson(schedules[static_cast<size_t>(r)]).dump(), StageScheduleJson(expected, fastest, r % kPp))
        << "rank " << r;
  }
  // A plan, not the highest clock everywhere: the fastest point slows some computations.
  std::set<int> used;
  for (const auto& s : schedules) {
    for (const auto& [instruction, f] : s.frequencies) used.insert(f);
  }
  EXPECT_GT(used.size(), 1u);

  auto admin = server.Client();
  const std::string path = "/v1/jobs/" + EncodeJobIdForPath(job_id);
  auto job = Get(*admin, path);
  EXPECT_EQ(job.body["profile_source"], "startup:gpt-4-stages.csv");
  EXPECT_EQ(job.body["frontier"], "ready");
  EXPECT_EQ(job.body["round"], 1);
  EXPECT_EQ(job.body["ranks_with_results"], 0);  // Zeus's client never posts /result
  auto frontier = Get(*admin, path + "/frontier");
  EXPECT_EQ(frontier.body["num_points"], expected.points().size());
  auto preview = Get(*admin, path + "/schedule?rank=5");
  EXPECT_EQ(preview.body["mode"], "plan");

  // A job of another depth starts as before: no profile, every instruction at the highest clock.
  std::string other_id;
  auto others = StartZeusRanks(server.port(), {2, 1, 1, 2, "zeus-other"}, TestFrequencies(kFloorMhz), other_id, errors);
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
    ASSERT_EQ(others[static_cast<size_t>(r)].frequencies.size(), 2u * kMicrobatches);
    for (const auto& [instruction, f] : others[static_cast<size_t>(r)].frequencies) EXPECT_EQ(f, 1410) << "rank " << r;
  }
  EXPECT_EQ(Get(*admin, "/v1/jobs/" + EncodeJobIdForPath(other_id)).body["profile_source"], nullptr);

  // The job's own profile replaces the start-up one.
  auto upload = Put(*admin, path + "/profile", {{"csv", TestProfileCsv(kPp, 1380)}});
  EXPECT_EQ(upload.status, 202) << upload.text;
  EXPECT_EQ(Get(*admin, path).body["profile_source"], "csv");
  EXPECT_EQ(WaitForFrontier(*admin, EncodeJobIdForPath(job_id)).value("state", ""), "ready");
  EXPECT_EQ(Get(*admin, path + "/frontier").body["num_points"], TestFrontier(kPp, kMicrobatches, 1380).points().size());
}

TEST(ZeusCompat, ZeusDefaultProfilingResultIsStored) {
  ServerProcess server({"--microbatches", "2"});
  ASSERT_TRUE(server.running()) << server.startup_output();
  std::vector<std::unique_ptr<zeus_shapes::Client>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(std::make_unique<zeus_shapes::Client>("127.0.0.1", server.port()));
  auto job_id = ranks[0]->RegisterJob({2, 1, 1, 2, std::nullopt});
  ASSERT_TRUE(job_id.has_value()) << ranks[0]->last_error();
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r]->RegisterRank(*job_id, {r, 0, r, 0, {1410, 1395}}));
  // ProfilingResult(rank=r, iter_time=[...], iter_energy=[...]): the breakdowns default to {}.
  zeus_shapes::ProfilingResult zeus_default{0, {1.25}, {512.0}, {}, {}};
  EXPECT_TRUE(ranks[0]->ReportResult(*job_id, zeus_default)) << ranks[0]->last_error();  // no sweep running
  // The first round starts the server's profiling sweep; the default result is stored, and the
  // sweep step waits for a result that measured it.
  std::thread other([&] { EXPECT_TRUE(ranks[1]->GetSchedule(*job_id, 1).has_value()) << ranks[1]->last_error(); });
  EXPECT_TRUE(ranks[0]->GetSchedule(*job_id, 0).has_value()) << ranks[0]->last_error();
  other.join();
  EXPECT_TRUE(ranks[0]->ReportResult(*job_id, zeus_default)) << ranks[0]->last_error();
  zeus_shapes::ProfilingResult second_default{1, {1.25}, {498.0}, {}, {}};
  EXPECT_TRUE(ranks[1]->ReportResult(*job_id, second_default)) << ranks[1]->last_error();
  auto admin = server.Client();
  auto job = Get(*admin, "/v1/jobs/" + EncodeJobIdForPath(*job_id));
  EXPECT_EQ(job.body["ranks_with_results"], 2);
  EXPECT_EQ(job.body["state"]["profiling"]["step"], 0);
  // A result for the sweep step that carries breakdowns without its lists is still refused.
  auto refused = Post(*admin, "/result/" + EncodeJobIdForPath(*job_id),
                      {{"rank", 0},
                       {"iter_time", {1.25}},
                       {"iter_energy", {512.0}},
                       {"time_breakdown", {{"forward", {{0.1, 0.1}}}}},
                       {"energy_breakdown", {{"forward", {{9, 9}}}}}});
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.body.value("error", ""),
            "rank 0: this round profiles 1410 MHz; time_breakdown and energy_breakdown need non-empty 'forward' and "
            "'backward' (or 'backward_input' and 'backward_weight') lists");
}

}  // namespace
}  // namespace wattcut::testing
