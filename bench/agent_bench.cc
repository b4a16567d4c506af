// What going through the node agent costs (issue 11, requirement 6). A real AgentService runs in
// this process on one simulated GPU, serving a Unix socket; the client is AgentBackend over it.
//   BM_AgentBackend_LockRoundTrip      one SM clock lock, request to answer: the client's JSON, the
//                                      socket both ways, the agent's parsing, lease check,
//                                      composition with the ceiling and the (simulated) NVML call.
//                                      Alternates two clocks so that each is a real change.
//   BM_AgentBackend_ReadingRoundTrip   one reading (GET /v1/readings: every GPU's power, energy,
//                                      clock and limit) parsed for one value.
//   BM_AgentSetter_SetFrequency_SleepingWorker
//                                      the training thread's cost of one frequency request when the
//                                      setter's worker locks through the agent: SetFrequency alone
//                                      (manual time), the worker's round trip happening after it.
//   BM_AgentHttp_Lock/Read/{0,1}      a lock and a reading through /v1 (0) and zeusd's API (1), one
//                                      HTTP client for both (below).
//   BM_RankClient_StepPath_Agent/C     BM_RankClient_StepPath (gpu_bench.cc) with the rank's
//                                      clocks going through the agent: the training thread's whole
//                                      cost of a planned 24-instruction step; C = 1: a new plan is
//                                      installed at every step. per_instruction_us = step / 24.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "bench/rank_step_bench.h"
#include "wattcut/agent/agent_service.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/simulated_backend.h"
#include "wattcut/http/bounded_http_server.h"
#include "wattcut/http/http_client.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/rank_client.h"

namespace wattcut {
namespace {

// An agent on one simulated GPU, on a socket in a fresh folder (removed at the end).
class BenchAgent {
 public:
  BenchAgent() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wcbench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return;
    folder_ = pattern;
    agent::AgentServiceOptions options;
    options.socket_path = folder_ + "/agent.sock";
    options.socket_mode = 0600;
    options.hostname = "bench";
    options.node.log = [](const std::string&) {};
    auto gpu = SimulatedBackend::Create("a100-sxm", 1);
    if (!gpu.ok()) return;
    auto started = agent::AgentService::Start(std::move(options), std::move(*gpu));
    if (!started.ok()) {
      error_ = started.error().message;
      return;
    }
    service_ = std::move(*started);
  }
  ~BenchAgent() {
    service_.reset();
    std::error_code ignored;
    if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
  }
  std::string socket() const { return folder_ + "/agent.sock"; }
  bool ok() const { return service_ != nullptr; }
  const std::string& error() const { return error_; }

  // A client; null after marking the benchmark skipped.
  std::unique_ptr<AgentBackend> Client(benchmark::State& state) {
    if (!ok()) {
      state.SkipWithError(("the agent does not start: " + error_).c_str());
      return nullptr;
    }
    AgentBackendOptions options;
    options.endpoint.unix_socket = socket();
    options.log = [](const std::string&) {};
    auto backend = AgentBackend::Open(std::move(options));
    if (!backend.ok()) {
      state.SkipWithError(backend.error().message.c_str());
      return nullptr;
    }
    if (Status s = (*backend)->LeaseGpus({0}); !s.ok()) {
      state.SkipWithError(s.error().message.c_str());
      return nullptr;
    }
    return std::move(*backend);
  }

 private:
  std::string folder_;
  std::string error_;
  std::unique_ptr<agent::AgentService> service_;
};

void BM_AgentBackend_LockRoundTrip(benchmark::State& state) {
  BenchAgent agent;
  auto backend = agent.Client(state);
  if (!backend) return;
  int i = 0;
  for (auto _ : state) {
    const int mhz = (i++ & 1) ? 1200 : 1410;
    if (Status s = backend->LockGpuClocks(0, mhz, mhz); !s.ok()) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
  }
}
BENCHMARK(BM_AgentBackend_LockRoundTrip)->Unit(benchmark::kMicrosecond);

void BM_AgentBackend_ReadingRoundTrip(benchmark::State& state) {
  BenchAgent agent;
  auto backend = agent.Client(state);
  if (!backend) return;
  for (auto _ : state) {
    auto clock = backend->SmClockMhz(0);
    if (!clock.ok()) {
      state.SkipWithError(clock.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(*clock);
  }
}
BENCHMARK(BM_AgentBackend_ReadingRoundTrip)->Unit(benchmark::kMicrosecond);

// The same two round trips through zeusd's API (issue 29), and through /v1 with the same HTTP
// client (libcurl over the socket), so that the two APIs are compared on one client:
//   BM_AgentHttp_Lock/0     PUT /v1/gpus/0/sm-clocks {"min_mhz","max_mhz"} (under a /v1 lease)
//   BM_AgentHttp_Lock/1     POST /gpu/set_gpu_locked_clocks?gpu_ids=0&...&block=true (implicit lease)
//   BM_AgentHttp_Read/0     GET /v1/readings
//   BM_AgentHttp_Read/1     GET /gpu/get_power?gpu_ids=0
std::unique_ptr<http::HttpClient> SocketClient(const BenchAgent& agent, benchmark::State& state) {
  if (!agent.ok()) {
    state.SkipWithError(("the agent does not start: " + agent.error()).c_str());
    return nullptr;
  }
  http::HttpEndpoint endpoint;
  endpoint.unix_socket = agent.socket();
  auto client = http::HttpClient::Create(endpoint);
  if (!client.ok()) {
    state.SkipWithError(client.error().message.c_str());
    return nullptr;
  }
  return std::move(*client);
}

bool Answered(const Result<http::HttpResponse>& answer, benchmark::State& state) {
  if (answer.ok() && answer->status / 100 == 2) return true;
  state.SkipWithError(answer.ok() ? ("HTTP " + std::to_string(answer->status) + ": " + answer->body).c_str()
                                  : answer.error().message.c_str());
  return false;
}

void BM_AgentHttp_Lock(benchmark::State& state) {
  const bool zeusd = state.range(0) == 1;
  BenchAgent agent;
  auto client = SocketClient(agent, state);
  if (!client) return;
  if (!zeusd && !Answered(client->Request("POST", "/v1/leases", R"({"gpus":[0],"ttl_s":3600})"), state)) return;
  int i = 0;
  for (auto _ : state) {
    const std::string mhz = (i++ & 1) ? "1200" : "1410";
    auto answer =
        zeusd ? client->Request("POST", "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=" + mhz +
                                            "&max_clock_mhz=" + mhz + "&block=true")
              : client->Request("PUT", "/v1/gpus/0/sm-clocks", R"({"min_mhz":)" + mhz + R"(,"max_mhz":)" + mhz + "}");
    if (!Answered(answer, state)) break;
  }
  state.SetLabel(zeusd ? "zeusd POST /gpu/set_gpu_locked_clocks" : "PUT /v1/gpus/0/sm-clocks");
}
BENCHMARK(BM_AgentHttp_Lock)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_AgentHttp_Read(benchmark::State& state) {
  const bool zeusd = state.range(0) == 1;
  BenchAgent agent;
  auto client = SocketClient(agent, state);
  if (!client) return;
  for (auto _ : state) {
    auto answer = client->Request("GET", zeusd ? "/gpu/get_power?gpu_ids=0" : "/v1/readings");
    if (!Answered(answer, state)) break;
    benchmark::DoNotOptimize(answer->body.size());
  }
  state.SetLabel(zeusd ? "zeusd GET /gpu/get_power" : "GET /v1/readings");
}
BENCHMARK(BM_AgentHttp_Read)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// BM_AgentBackend_SetterDuringSlowRenewal: a fake agent on a Unix socket whose lease renewal takes
// 20 ms (a node so busy that its agent answers late); the backend (ttl 1 s) renews every 0.33 s.
// Setters are timed one by one for 2 s; counters: the slowest (max_setter_ms), the 99th percentile
// (p99_setter_ms) and the share of setters slower than 5 ms (slow_setters_pct). A setter that has to
// wait behind a renewal pays the renewal's 20 ms (issue 30, point 6).
class SlowRenewalAgent {
 public:
  static constexpr auto kRenewal = std::chrono::milliseconds(20);
  SlowRenewalAgent() : server_(http::ConnectionLimits{}, http::BoundedHttpServer::Observer{}) {
    std::string pattern = (std::filesystem::temp_directory_path() / "wcrenew-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return;
    folder_ = pattern;
    auto json_answer = [](httplib::Response& res, const std::string& body) {
      res.set_content(body, "application/json");
    };
    server_.Get("/v1/agent", [json_answer](const httplib::Request&, httplib::Response& res) {
      json_answer(res, R"({"api_version":1,"backend":"fake","gpu_count":1})");
    });
    server_.Get("/v1/gpus", [json_answer](const httplib::Request&, httplib::Response& res) {
      json_answer(res, R"({"gpus":[{"index":0,"name":"fake","uuid":"GPU-0","sm_clocks_mhz":[1410,1200],)"
                       R"("memory_clocks_mhz":[1593],"power_limit_w":{"min":100,"max":400,"default":400},)"
                       R"("energy_counter":true}]})");
    });
    server_.Post("/v1/leases", [json_answer](const httplib::Request&, httplib::Response& res) {
      res.status = 201;
      json_answer(res, R"({"id":1,"gpus":[0],"ttl_s":1,"holder":{"pid":1,"uid":0}})");
    });
    server_.Post("/v1/leases/1/renew", [json_answer](const httplib::Request&, httplib::Response& res) {
      std::this_thread::sleep_for(kRenewal);
      json_answer(res, R"({"id":1,"gpus":[0],"ttl_s":1,"holder":{"pid":1,"uid":0}})");
    });
    server_.Put("/v1/gpus/0/sm-clocks",
                [json_answer](const httplib::Request&, httplib::Response& res) { json_answer(res, "{}"); });
    server_.Delete("/v1/leases/1",
                   [json_answer](const httplib::Request&, httplib::Response& res) { json_answer(res, "{}"); });
    std::string error;
    if (!server_.StartWorkers(8).ok() || !server_.BindUnixSocket(socket(), 0600, "", error)) return;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 1000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~SlowRenewalAgent() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
    std::error_code ignored;
    if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
  }
  std::string socket() const { return folder_ + "/agent.sock"; }
  bool running() { return server_.is_running(); }

 private:
  std::string folder_;
  http::BoundedHttpServer server_;
  std::thread thread_;
};

void BM_AgentBackend_SetterDuringSlowRenewal(benchmark::State& state) {
  SlowRenewalAgent agent;
  if (!agent.running()) {
    state.SkipWithError("the fake agent does not start");
    return;
  }
  AgentBackendOptions options;
  options.endpoint.unix_socket = agent.socket();
  options.lease_ttl_s = 1;
  options.log = [](const std::string&) {};
  auto opened = AgentBackend::Open(std::move(options));
  if (!opened.ok()) {
    state.SkipWithError(opened.error().message.c_str());
    return;
  }
  AgentBackend& backend = **opened;
  std::vector<double> setter_ms;
  for (auto _ : state) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (int i = 0; std::chrono::steady_clock::now() < until && i < 200000; ++i) {
      const int mhz = (i & 1) ? 1200 : 1410;
      const auto started = std::chrono::steady_clock::now();
      if (Status s = backend.LockGpuClocks(0, mhz, mhz); !s.ok()) {
        state.SkipWithError(s.error().message.c_str());
        return;
      }
      setter_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    }
  }
  std::sort(setter_ms.begin(), setter_ms.end());
  const size_t slow =
      static_cast<size_t>(std::count_if(setter_ms.begin(), setter_ms.end(), [](double ms) { return ms > 5; }));
  state.counters["setters"] = static_cast<double>(setter_ms.size());
  state.counters["max_setter_ms"] = setter_ms.back();
  state.counters["p99_setter_ms"] = setter_ms[setter_ms.size() * 99 / 100];
  state.counters["slow_setters_pct"] = 100.0 * static_cast<double>(slow) / static_cast<double>(setter_ms.size());
}
BENCHMARK(BM_AgentBackend_SetterDuringSlowRenewal)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AgentSetter_SetFrequency_SleepingWorker(benchmark::State& state) {
  BenchAgent agent;
  auto backend = agent.Client(state);
  if (!backend) return;
  auto setter = StartThreadFrequencySetter(*backend, 0);
  if (!setter.ok()) {
    state.SkipWithError(setter.error().message.c_str());
    return;
  }
  int i = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    (*setter)->SetFrequency((i++ & 1) ? 1200 : 1410);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    (void)(*setter)->WaitUntilApplied();  // the agent's round trip, outside the timed part
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  state.counters["locks_applied"] = static_cast<double>((*setter)->stats().applied);
  (void)(*setter)->Stop();
}
BENCHMARK(BM_AgentSetter_SetFrequency_SleepingWorker)->UseManualTime()->Iterations(2000);

void BM_RankClient_StepPath_Agent(benchmark::State& state) {
  BenchAgent agent;
  if (!agent.ok()) {
    state.SkipWithError(("the agent does not start: " + agent.error()).c_str());
    return;
  }
  RankClientOptions options;
  options.agent_socket = agent.socket();
  bench::ScriptDeployments(options, /*change_every_step=*/state.range(0) != 0);
  auto started = RankClient::Start(options);
  if (!started.ok()) {
    state.SkipWithError(started.error().message.c_str());
    return;
  }
  RankClient& client = **started;
  if (!client.through_agent()) {
    state.SkipWithError("the rank does not go through the agent");
    return;
  }
  const double timed_s = bench::RunTimedSteps(state, client);
  const size_t instructions = bench::AlternatingPlan(1).size();
  state.counters["per_instruction_us"] =
      state.iterations() > 0 ? timed_s * 1e6 / (static_cast<double>(state.iterations()) * instructions) : 0;
  state.counters["locks_applied"] = static_cast<double>(client.setter_stats().applied);
  state.counters["plan_changes"] = static_cast<double>(client.plan_version());
  (void)client.Close();
}
BENCHMARK(BM_RankClient_StepPath_Agent)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace wattcut
