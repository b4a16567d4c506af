#include "wattcut/polca/request_log_load.h"

#include <algorithm>
#include <cmath>

#include "wattcut/polca/telemetry_synthesis.h"

namespace wattcut::polca {

Result<telemetry::ServingLoadTelemetry> LoadFromRequestLog(const ServerRequestLog& log,
                                                           const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                           const PolcaConfig& config) {
  if (gpus.empty() || gpus[0].samples.empty()) return Error{"no GPU power to take the clocks from"};
  const std::vector<telemetry::GpuPowerSample>& s = gpus[0].samples;
  const double end_unix_s = s.back().time_s;
  if (end_unix_s <= log.start_unix_s) {
    return Error{"the request log of '" + log.server + "' starts after its power file ends"};
  }
  std::vector<ClockStep> clocks;
  double current = -1;
  for (const telemetry::GpuPowerSample& x : s) {
    if (!x.has_clock() || x.time_s < log.start_unix_s) continue;
    const double f = std::clamp(x.sm_clock_mhz, config.gpu.min_freq_mhz, config.gpu.max_freq_mhz);
    if (current < 0 || std::abs(f - current) > 0.02 * config.gpu.max_freq_mhz) {
      const double from = std::max(0.0, x.time_s - log.start_unix_s);
      if (!clocks.empty() && from <= clocks.back().from_s) {
        clocks.back().freq_mhz = f;
      } else {
        clocks.push_back({from, f});
      }
      current = f;
    }
  }
  SynthesisOptions o;
  o.server = log.server;
  o.start_unix_s = log.start_unix_s;
  o.duration_s = end_unix_s - log.start_unix_s;
  o.power_noise_w = 0;
  o.server_noise_w = 0;
  o.load_jitter_s = 0;
  std::vector<Arrival> arrivals;
  for (const Arrival& a : log.arrivals) {
    if (a.time_s <= o.duration_s) arrivals.push_back(a);
  }
  Result<SynthesizedTelemetry> t = SynthesizeServerTelemetry(config, arrivals, clocks, o);
  if (!t.ok()) return t.error();
  telemetry::ServingLoadTelemetry load = std::move(t->load);
  load.format = "request-log";
  load.notes.push_back(
      "the load is the request log replayed through the base config's scheduler and service timing "
      "at the power file's clocks: record vLLM's metrics for load as the server saw it");
  return load;
}

}  // namespace wattcut::polca
