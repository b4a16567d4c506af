// POLCA simulator speed: how many simulated seconds a row simulation covers per wall
// second (counter sim_s_per_wall_s). The headline case is the issue's: 7 days of a
// 52-server row (40 provisioned + 30 %) under POLCA on the Azure conversation trace
// (a synthetic trace of the same rate when ../shared is missing).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "wattcut/base/shared_data.h"
#include "wattcut/polca/row_power_policy.h"
#include "wattcut/polca/row_simulator.h"

namespace {

using namespace wattcut::polca;

const RequestTrace& Trace() {
  static const RequestTrace trace = [] {
    std::string path = wattcut::SharedDataPath("azure-llm-inference-2023/AzureLLMInferenceTrace_conv.csv");
    if (std::filesystem::exists(path)) {
      auto read = RequestTrace::Read(path);
      if (read.ok()) return std::move(read).value();
    }
    std::vector<TraceRequest> requests;  // 5.5 requests/s for an hour, conversation-like sizes
    for (int i = 0; i < 19800; ++i) requests.push_back({i / 5.5, 100 + (i * 7919) % 2400, 10 + (i * 104729) % 420});
    return std::move(RequestTrace::FromRequests(requests, "synthetic")).value();
  }();
  return trace;
}

void BM_SimulateRow(benchmark::State& state, PolicyKind policy, int servers, double days) {
  const PolcaConfig config = *BuiltInConfig("a100");
  RowRunOptions options;
  options.policy = policy;
  options.servers = servers;
  options.duration_s = days * 86400;
  int64_t arrivals = 0;
  for (auto _ : state) {
    auto run = SimulateRow(config, Trace(), options);
    if (!run.ok()) {
      state.SkipWithError(run.error().message.c_str());
      return;
    }
    arrivals = run->arrivals;
    benchmark::DoNotOptimize(run->power_max);
  }
  state.counters["sim_s_per_wall_s"] =
      benchmark::Counter(options.duration_s, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["requests_per_wall_s"] =
      benchmark::Counter(static_cast<double>(arrivals), benchmark::Counter::kIsIterationInvariantRate);
}

// Rates are per wall second (UseRealTime); the CPU column shows the time on one core.
BENCHMARK_CAPTURE(BM_SimulateRow, polca_52_servers_7_days, PolicyKind::kPolca, 52, 7.0)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SimulateRow, polca_52_servers_1_day, PolicyKind::kPolca, 52, 1.0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_PolicyDecide(benchmark::State& state) {
  RowPowerPolicy policy(PolicyKind::kPolca, PolicySpec{}, ControlSpec{});
  double t = 0;
  size_t commands = 0;
  for (auto _ : state) {
    t += 1;
    double p = 0.7 + 0.25 * ((static_cast<int64_t>(t) * 2654435761LL) % 1000) / 1000.0;
    commands += policy.Decide({t - 2, p}, t).size();
  }
  benchmark::DoNotOptimize(commands);
}
BENCHMARK(BM_PolicyDecide);

}  // namespace
