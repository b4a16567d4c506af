// The planning server at the scale of a 16,384-rank job (16 stages x 128 dp x 8 tp), over
// loopback with simulated ranks (issue 12): registration of every rank, delivery of the plan
// to every rank (GET /v1/jobs/{id}/deployment, which never waits), one straggler switch (the
// report, then every rank polling until it has the new version), and schedule rounds of the Zeus
// protocol (every rank long-polls GET /schedule at once: long_poll_round.h). A real `wattcut serve`
// process, so that its CPU time (/proc/PID/stat) and peak memory (VmHWM) are its own.
// Every loop is bounded; the server listens on 127.0.0.1 only.
//
//   build/bench/wattcut_scale_bench [--pp 16 --dp 128 --tp 8 --threads 32 --rounds 3]
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/long_poll_round.h"
#include "tests/server/server_process.h"
#include "tests/server/test_profiles.h"
#include "wattcut/http/descriptor_limit.h"
#include "wattcut/runtime/plan_server_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using wattcut::bench::CpuSeconds;
using wattcut::bench::PeakMb;
using wattcut::testing::ServerProcess;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// Runs `work(rank, client)` for every rank on `threads` threads, each with its own keep-alive
// connection; returns the failures.
template <typename Work>
int ForEveryRank(int ranks, int threads, int port, const Work& work) {
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // else a POST waits for a delayed ACK (40 ms)
      client.set_read_timeout(60, 0);
      for (int rank = next++; rank < ranks; rank = next++) {
        if (!work(rank, client)) ++failures;
      }
    });
  }
  for (auto& t : pool) t.join();
  return failures.load();
}

struct Phase {
  const char* name;
  double wall_s;
  double server_cpu_s;
  int requests;
  int failures;
};

}  // namespace

int main(int argc, char** argv) {
  int pp = 16, dp = 128, tp = 8, threads = 32, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int value = std::atoi(argv[i + 1]);
    if (value < 1) {
      std::fprintf(stderr, "wattcut_scale_bench: %s must be >= 1\n", flag.c_str());
      return 2;
    }
    if (flag == "--pp")
      pp = value;
    else if (flag == "--dp")
      dp = value;
    else if (flag == "--tp")
      tp = value;
    else if (flag == "--threads")
      threads = value;
    else if (flag == "--rounds")
      rounds = value;
    else {
      std::fprintf(stderr, "wattcut_scale_bench: unknown flag %s (--pp --dp --tp --threads --rounds)\n", flag.c_str());
      return 2;
    }
  }
  const int world = pp * dp * tp;
  constexpr int kMicrobatches = 16;
  // One connection per rank in the schedule rounds.
  const wattcut::http::DescriptorLimit descriptors = wattcut::http::RaiseDescriptorLimit();
  if (descriptors.soft < static_cast<uint64_t>(world) + 64) {
    std::fprintf(stderr, "wattcut_scale_bench: %d ranks need %d descriptors, the limit is %llu (ulimit -n)\n", world,
                 world + 64, static_cast<unsigned long long>(descriptors.soft));
    return 2;
  }
  ServerProcess server({"--sync", "normal", "--max-connections-per-client", "4096"});
  if (!server.running()) {
    std::fprintf(stderr, "wattcut_scale_bench: the server did not start: %s\n", server.startup_output().c_str());
    return 1;
  }
  auto control = server.Client();
  const auto options = wattcut::testing::TestPlannerOptions(kMicrobatches);
  auto registered =
      control->Post("/register_job",
                    json{{"pp_degree", pp},
                         {"dp_degree", dp},
                         {"tp_degree", tp},
                         {"world_size", world},
                         {"planner", {{"num_microbatches", kMicrobatches}, {"p2p_power_w", options.p2p_power_w}}}}
                        .dump(),
                    "application/json");
  if (!registered || registered->status != 200) {
    std::fprintf(stderr, "wattcut_scale_bench: register_job failed: %s\n",
                 registered ? registered->body.c_str() : "no reply");
    return 1;
  }
  const std::string job = wattcut::EncodeJobIdForPath(json::parse(registered->body).get<std::string>());
  const auto freqs = wattcut::testing::TestFrequencies();
  std::vector<Phase> phases;
  auto measure = [&](const char* name, int requests, const auto& work) {
    const double cpu0 = CpuSeconds(server.pid());
    const auto t0 = Clock::now();
    const int failures = ForEveryRank(world, threads, server.port(), work);
    phases.push_back({name, Seconds(t0), CpuSeconds(server.pid()) - cpu0, requests, failures});
  };

  measure("register every rank", world, [&](int rank, httplib::Client& c) {
    json info = {{"rank", rank},
                 {"dp_rank", rank / (pp * tp)},
                 {"pp_rank", (rank / tp) % pp},
                 {"tp_rank", rank % tp},
                 {"available_frequencies", freqs}};
    auto reply = c.Post("/register_rank/" + job, info.dump(), "application/json");
    return reply && reply->status == 200;
  });
  auto upload = control->Put("/v1/jobs/" + job + "/profile", json{{"csv", wattcut::testing::TestProfileCsv(pp)}}.dump(),
                             "application/json");
  if (!upload || upload->status != 202) {
    std::fprintf(stderr, "wattcut_scale_bench: profile upload failed\n");
    return 1;
  }
  json frontier;
  for (int i = 0; i < 60000; ++i) {  // at most 10 min
    auto status = control->Get("/v1/jobs/" + job + "/frontier");
    frontier = status ? json::parse(status->body) : json();
    if (frontier.value("state", "") != "computing") break;
    usleep(10000);
  }
  if (frontier.value("state", "") != "ready") {
    std::fprintf(stderr, "wattcut_scale_bench: frontier %s\n", frontier.dump().c_str());
    return 1;
  }
  std::vector<uint64_t> version(static_cast<size_t>(world), 0);
  measure("deliver the plan to every rank", world, [&](int rank, httplib::Client& c) {
    auto reply = c.Get("/v1/jobs/" + job + "/deployment?rank=" + std::to_string(rank) + "&step=10&version=0");
    if (!reply || reply->status != 200) return false;
    json d = json::parse(reply->body);
    version[static_cast<size_t>(rank)] = d.value("version", 0);
    return d.value("mode", "") == "plan";
  });
  const uint64_t planned = version[0];
  // The switch: one report, then every rank polls (back to back, as a burst) until it has
  // the new version. The ranks of pipeline dp / 2 keep their plan; the others get the slower one.
  const auto t_report = Clock::now();
  auto report = control->Post("/v1/jobs/" + job + "/stragglers", json{{"dp_rank", dp / 2}, {"slowdown", 1.2}}.dump(),
                              "application/json");
  if (!report || report->status != 200) {
    std::fprintf(stderr, "wattcut_scale_bench: the straggler report failed: %s\n",
                 report ? report->body.c_str() : "no reply");
    return 1;
  }
  std::atomic<int> switched{0};
  measure("straggler switch: every rank polls once", world, [&](int rank, httplib::Client& c) {
    auto reply = c.Get("/v1/jobs/" + job + "/deployment?rank=" + std::to_string(rank) +
                       "&step=11&version=" + std::to_string(planned));
    if (!reply || reply->status != 200) return false;
    if (json::parse(reply->body).value("version", planned) != planned) ++switched;
    return true;
  });
  const double report_to_last_s = Seconds(t_report);
  auto poll = control->Get("/v1/jobs/" + job + "/deployment?rank=0&step=11&version=" + std::to_string(planned));
  const double poll_interval_s = poll ? json::parse(poll->body).value("poll_interval_s", 0.0) : 0;

  // Schedule rounds: every rank long-polls at once.
  auto waiting_now = [&control] {
    auto metrics = control->Get("/metrics");
    if (!metrics) return -1;
    const std::string gauge = "\nwattcut_long_polls_waiting ";
    const size_t at = metrics->body.find(gauge);
    return at == std::string::npos ? -1 : std::atoi(metrics->body.c_str() + at + gauge.size());
  };
  wattcut::bench::LongPollRounds schedule_rounds(server.port(), job, world, server.pid(), waiting_now);
  std::vector<wattcut::bench::LongPollRound> round_results;
  for (int r = 0; r < rounds; ++r) round_results.push_back(schedule_rounds.Run());

  std::printf("wattcut_scale_bench: %d ranks (pp %d x dp %d x tp %d), %d client threads, frontier of %d points\n",
              world, pp, dp, tp, threads, frontier.value("num_points", 0));
  std::printf("%-42s %9s %9s %12s %10s %8s\n", "phase", "wall s", "server s", "requests/s", "server us", "failed");
  for (const Phase& p : phases) {
    std::printf("%-42s %9.2f %9.2f %12.0f %10.1f %8d\n", p.name, p.wall_s, p.server_cpu_s, p.requests / p.wall_s,
                1e6 * p.server_cpu_s / p.requests, p.failures);
  }
  std::printf("ranks with the new plan after one poll each: %d of %d; report to the last of them: %.2f s of polling\n",
              switched.load(), world, report_to_last_s);
  std::printf(
      "server poll interval for this job: %.3f s, so in a cluster every rank has the change within "
      "1.2 x %.3f + %.2f = %.2f s of the report\n",
      poll_interval_s, poll_interval_s, report_to_last_s, 1.2 * poll_interval_s + report_to_last_s);
  std::printf("\nschedule rounds (every rank long-polls GET /schedule at once, one connection each):\n");
  std::printf("%-6s %9s %7s %15s %15s %14s %16s %9s\n", "round", "answered", "failed", "waiting before",
              "server threads", "all answered s", "after last ask s", "server s");
  int round_failures = 0;
  for (size_t r = 0; r < round_results.size(); ++r) {
    const auto& x = round_results[r];
    std::printf("%-6zu %9d %7d %15d %15d %14.2f %16.3f %9.2f %7.0f -> %-6.0f\n", r + 1, x.answered, x.failed,
                x.waiting_seen, x.server_threads, x.all_answered_s, x.after_last_ask_s, x.server_cpu_s,
                x.server_rss_before_mb, x.server_rss_waiting_mb);
    if (!x.first_failure.empty()) std::printf("  first failure: %s\n", x.first_failure.c_str());
    round_failures += x.failed;
  }
  std::printf("server peak memory (VmHWM): %.0f MB; total CPU: %.2f s\n", PeakMb(server.pid()),
              CpuSeconds(server.pid()));
  return switched.load() == world && round_failures == 0 ? 0 : 1;
}
