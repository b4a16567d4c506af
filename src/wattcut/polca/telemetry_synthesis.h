// Telemetry of one inference server as its monitoring would record it, made from the project's
// own server model (server_model.h): per-GPU power as nvidia-smi samples it and vLLM's load
// metrics as Prometheus scrapes them. It is what `polca calibrate` is checked against (a model
// whose parameters are known, driven by trace load, written out with measurement noise, must be
// recovered) and what docs/polca.md's worked example is made from.
//
//  * Power: every power_sample_s, each GPU's `power.draw.average` (the mean GPU power over the
//    power_average_s before the sample, as NVML's 1 s average) and `power.draw.instant` (the
//    power at the sample), each plus independent Gaussian noise of power_noise_w (sd), never
//    below 0; `clocks.sm` is the locked clock. Every GPU of the server draws the model's per-GPU
//    power (the model has no per-GPU spread); the noise is each GPU's own.
//  * Load: every load_sample_s (each scrape up to load_jitter_s early or late), vllm:num_requests_running (in prefill
//  or decoding),
//    vllm:num_requests_waiting, and the counters vllm:prompt_tokens_total (tokens of prefills that
//    ended), vllm:generation_tokens_total (each request's first token at its prefill's end, then
//    one per decode iteration, whole tokens only), vllm:time_to_first_token_seconds_count
//    (prefills ended, per request), vllm:request_success_total (requests finished) and the
//    engine steps, vllm:iteration_tokens_total's _count (one per prefill and per decode
//    iteration, whole steps) and _sum (the prompt and generated tokens they processed).
//  * Server power (a BMC's 1 s average): at every power sample, the server model's power over the
//    same averaging window, plus noise of server_noise_w.
//  * Clocks: the GPUs are locked to each ClockStep's clock from its time on (in-band, at once).
//
// Deterministic from the seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::polca {

struct ClockStep {
  double from_s = 0;  // seconds after the start
  double freq_mhz = 0;
};

struct SynthesisOptions {
  std::string server = "node-a";
  double start_unix_s = 1715299200;  // 2024-05-10 00:00:00 UTC
  double duration_s = 7200;
  double power_sample_s = 0.25;
  double power_average_s = 1.0;
  double power_noise_w = 2.0;
  double server_noise_w = 15.0;
  double load_sample_s = 1.0;
  double load_jitter_s = 0.02;  // each scrape is up to this much early or late (uniform)
  uint64_t seed = 1;
};

struct SynthesizedTelemetry {
  // power: one series per GPU ("0".."N-1") with power.draw.average and clocks, and the server's
  // power; instant_power: the same samples' power.draw.instant.
  telemetry::PowerTelemetry power;
  telemetry::PowerTelemetry instant_power;
  telemetry::ServingLoadTelemetry load;
};

// A calibration run as an operator would record one: `rate_per_s` requests a second from the trace
// (its sizes and burstiness, flat in time), with the server drained for `drain_s` from minute
// `drain_at_minute` of every hour (an idle period to measure), for `duration_s`.
struct CalibrationRunSpec {
  double duration_s = 7200;
  double rate_per_s = 0.5;
  double drain_at_minute = 20;
  double drain_s = 180;
  uint64_t seed = 7;
};
std::vector<Arrival> CalibrationRunArrivals(const RequestTrace& trace, const CalibrationRunSpec& spec);

// The GPUs locked to each clock in turn for `every_s`, over `duration_s`.
std::vector<ClockStep> ClockCycle(const std::vector<double>& clocks_mhz, double every_s, double duration_s);

// `arrivals` in time order, times in seconds after the start; `clocks` in increasing from_s (none:
// the maximum clock throughout). Fails on clocks outside the config's range or out of order.
Result<SynthesizedTelemetry> SynthesizeServerTelemetry(const PolcaConfig& config, const std::vector<Arrival>& arrivals,
                                                       const std::vector<ClockStep>& clocks,
                                                       const SynthesisOptions& options);

}  // namespace wattcut::polca
