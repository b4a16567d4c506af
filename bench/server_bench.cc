// Schedule fetches against the planning server over loopback HTTP: an in-process
// `wattcut serve` (same Server class) and one benchmark thread per rank, each doing
// GET /schedule/{job}?rank=N in a loop. Every fetch is a long poll that completes when
// all ranks of the job have asked, so one iteration is one round of the job.
// Reports req_per_s (fetches answered per wall-clock second over all ranks) and the
// p50/p99 latency of one fetch.
//
//   build/bench/wattcut_bench --benchmark_filter=ServerScheduleFetch
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "wattcut/profile/gpu_model.h"
#include "wattcut/runtime/plan_server_client.h"
#include "wattcut/server/server.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kStages = 4;
constexpr int kMicrobatches = 8;

struct BenchServer {
  std::unique_ptr<wattcut::server::Server> server;
  std::thread thread;
  std::string dir;
  int port = 0;
};

BenchServer& GetServer() {
  static BenchServer* s = [] {
    auto* bs = new BenchServer;
    bs->dir =
        (std::filesystem::temp_directory_path() / ("wattcut_server_bench_" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(bs->dir);
    static std::string dir_to_remove = bs->dir;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir_to_remove, ec);
    });
    wattcut::server::ServerOptions options;
    options.port = 0;
    options.data_dir = bs->dir;
    options.sync = wattcut::server::SyncMode::kNormal;
    options.registry.max_long_polls = 256;
    auto created = wattcut::server::Server::Create(options);
    if (!created) {
      std::fprintf(stderr, "server: %s\n", created.error().message.c_str());
      std::abort();
    }
    bs->server = std::move(*created);
    bs->port = bs->server->port();
    bs->thread = std::thread([bs] { bs->server->Run(); });
    return bs;
  }();
  return *s;
}

std::string ProfileCsv() {
  auto model = wattcut::FindGpuModel("a100-sxm");
  wattcut::Profile profile = wattcut::MakeModelProfile(**model, kStages, 1200);
  std::string csv = "stage,instruction,frequency,time,energy\n";
  char line[256];
  for (int s = 0; s < kStages; ++s) {
    for (int k = 0; k < wattcut::kNumInstructionKinds; ++k) {
      auto kind = static_cast<wattcut::InstructionKind>(k);
      for (const auto& m : profile.measurements(s, kind)) {
        std::snprintf(line, sizeof(line), "%d,%s,%d,%.17g,%.17g\n", s,
                      std::string(wattcut::InstructionName(kind)).c_str(), m.freq_mhz, m.time_s, m.energy_j);
        csv += line;
      }
    }
  }
  return csv;
}

// A job of `ranks` ranks (pp = 4, dp = ranks / 4), planned and fully registered.
std::string JobFor(int ranks) {
  static std::mutex mu;
  static std::map<int, std::string> jobs;
  std::lock_guard lock(mu);
  if (jobs.count(ranks)) return jobs[ranks];
  BenchServer& bs = GetServer();
  httplib::Client c("127.0.0.1", bs.port);
  c.set_read_timeout(600, 0);
  int pp = std::min(ranks, kStages);
  int dp = ranks / pp;
  auto model = wattcut::FindGpuModel("a100-sxm");
  json job = {{"pp_degree", pp},
              {"dp_degree", dp},
              {"tp_degree", 1},
              {"world_size", ranks},
              {"planner", {{"num_microbatches", kMicrobatches}, {"p2p_power_w", (*model)->p2p_power_w}}}};
  auto res = c.Post("/register_job", job.dump(), "application/json");
  if (!res || res->status != 200) std::abort();
  std::string id = wattcut::EncodeJobIdForPath(json::parse(res->body).get<std::string>());
  std::vector<int> freqs;
  for (int f = 1410; f >= 1200; f -= 15) freqs.push_back(f);
  for (int r = 0; r < ranks; ++r) {
    json info = {
        {"rank", r}, {"dp_rank", r / pp}, {"pp_rank", r % pp}, {"tp_rank", 0}, {"available_frequencies", freqs}};
    auto rr = c.Post("/register_rank/" + id, info.dump(), "application/json");
    if (!rr || rr->status != 200) std::abort();
  }
  // The whole-job profile covers 4 stages; jobs with fewer ranks use fewer stages.
  std::string csv = ProfileCsv();
  if (pp < kStages) {
    std::string kept = "stage,instruction,frequency,time,energy\n";
    size_t pos = csv.find('\n') + 1;
    while (pos < csv.size()) {
      size_t end = csv.find('\n', pos);
      std::string line = csv.substr(pos, end - pos);
      if (std::stoi(line) < pp) kept += line + "\n";
      pos = end + 1;
    }
    csv = kept;
  }
  auto up = c.Put("/v1/jobs/" + id + "/profile", json{{"csv", csv}}.dump(), "application/json");
  if (!up || up->status != 202) std::abort();
  for (int i = 0; i < 100000; ++i) {
    auto st = c.Get("/v1/jobs/" + id + "/frontier");
    if (st && json::parse(st->body).value("state", "") == "ready") break;
    usleep(10000);
  }
  jobs[ranks] = id;
  return id;
}

// Latencies of every thread of one benchmark run; the last thread to finish reports.
struct RunStats {
  std::mutex mu;
  std::vector<double> latencies_s;
  Clock::time_point first_start = Clock::time_point::max();
  Clock::time_point last_end = Clock::time_point::min();
  int finished = 0;
};

void BM_ServerScheduleFetch(benchmark::State& state) {
  static RunStats stats;
  int ranks = state.threads();
  std::string id = JobFor(ranks);
  BenchServer& bs = GetServer();
  httplib::Client c("127.0.0.1", bs.port);
  c.set_read_timeout(600, 0);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  std::string path = "/schedule/" + id + "?rank=" + std::to_string(state.thread_index());
  std::vector<double> mine;
  auto start = Clock::now();
  for (auto _ : state) {
    auto t0 = Clock::now();
    auto res = c.Get(path);
    if (!res || res->status != 200) {
      state.SkipWithError("schedule fetch failed");
      break;
    }
    mine.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  auto end = Clock::now();
  std::lock_guard lock(stats.mu);
  stats.latencies_s.insert(stats.latencies_s.end(), mine.begin(), mine.end());
  stats.first_start = std::min(stats.first_start, start);
  stats.last_end = std::max(stats.last_end, end);
  if (++stats.finished == ranks) {
    auto& v = stats.latencies_s;
    std::sort(v.begin(), v.end());
    if (!v.empty()) {
      double seconds = std::chrono::duration<double>(stats.last_end - stats.first_start).count();
      state.counters["req_per_s"] = static_cast<double>(v.size()) / seconds;
      state.counters["p50_ms"] = 1000 * v[v.size() / 2];
      state.counters["p99_ms"] = 1000 * v[std::min(v.size() - 1, v.size() * 99 / 100)];
    }
    v.clear();
    stats.first_start = Clock::time_point::max();
    stats.last_end = Clock::time_point::min();
    stats.finished = 0;
  }
}
BENCHMARK(BM_ServerScheduleFetch)->Threads(1)->Threads(8)->Threads(64)->UseRealTime();

}  // namespace
