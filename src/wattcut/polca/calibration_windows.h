// One server's measured power and serving load, cut into the windows between consecutive load
// scrapes: the measurements `polca calibrate` fits the power model to (power_calibration.h).
//
//  * A window runs from one load sample to the next. Windows longer than twice the median scrape
//    interval (a gap in the scrapes) are left out, and counted.
//  * Power: the mean over the window of the server's GPUs' power, per GPU. A sensor that averages
//    (power.draw.average, NVML's 1 s average: `sensor_average_s` = 1) is
//    read at the window's end, interpolated between the samples around it: its value there is the
//    mean of the second before, i.e. of a 1 s window. An instant sensor (power.draw.instant: 0)
//    is averaged over the samples inside the window (SensorAverageSecondsFor says which). A GPU with no
//    sample within `max_power_gap_s` of where it is read leaves the window out.
//  * Clock: the SM clocks of the samples read for the window. The window is `clock_steady` when
//    they differ by at most 2 % of the highest; its clock is their mean (NaN when no sample says).
//  * Server power (when a server series exists): its mean over the window, read like the GPUs.
//  * Load: the counters' increases over the window and the gauges at both ends; the decode batch
//    at a scrape is requests past their first token and not finished (first-token count minus
//    finished count, anchored at a scrape with nothing running), and a prefill was in progress at
//    a scrape when more requests run than decode, holding the difference.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::polca {

struct CalibrationWindow {
  double start_s = 0;  // Unix seconds
  double end_s = 0;
  double gpu_w = 0;      // measured mean power per GPU
  double server_w = -1;  // measured mean server power; < 0: none
  double freq_mhz = 0;   // NaN: the file does not say
  bool clock_steady = true;
  // Load over the window.
  // Prompt tokens of prefills that ended in it, less those the prefix cache held
  // (vllm:prefix_cache_hits_total): the tokens computed.
  double prompt_tokens = 0;
  double prefilled_requests = 0;  // requests whose first token came in it
  double generated_tokens = 0;    // every generated token, first tokens included
  double decode_batch_start = 0;  // requests decoding at start_s / end_s
  double decode_batch_end = 0;
  double waiting_start = 0;  // requests waiting at start_s / end_s (0 when the file does not say)
  double waiting_end = 0;
  // Requests in a prefill in progress at start_s / end_s (running less decoding; one prefill may
  // hold several, batched): 0 when none.
  int prefilling_start = 0;
  int prefilling_end = 0;
  bool idle = false;  // nothing running or waiting at either end and no token in between
  // The share of the window the engine had work (the busy step's weight): the mean of its two ends,
  // an end busy when something runs or waits there; a window idle at both ends with an engine
  // step, or a token, in between is half busy. Without the running gauge: busy when the engine
  // stepped in the window (vllm:iteration_tokens_total_count rose).
  double busy_share = 0;
  double iterations = 0;  // engine steps in the window (0 when the file does not say)

  double length_s() const { return end_s - start_s; }
  bool prefill_at_start() const { return prefilling_start > 0; }
  bool prefill_at_end() const { return prefilling_end > 0; }
};

struct WindowOptions {
  double sensor_average_s = 1.0;  // 0: instant samples
  double max_power_gap_s = 1.0;
};

struct CalibrationWindows {
  std::vector<CalibrationWindow> windows;
  int gpus = 0;  // GPUs of the server in the power file
  double scrape_interval_s = 0;
  double power_sample_interval_s = 0;
  bool has_server_power = false;
  bool has_clock = false;
  bool has_decode_batch = false;       // the load had the first-token and finished counters
  bool has_prompt_tokens = false;      // vllm:prompt_tokens_total
  bool has_generation_tokens = false;  // vllm:generation_tokens_total
  // Where each run begins in `windows` (several runs of one setup are fitted together, each
  // aligned on its own): {0} for one run.
  std::vector<size_t> run_starts{0};
  int windows_without_power = 0;  // left out: a GPU had no sample near
  int scrape_gaps = 0;            // left out: longer than twice the median interval
  std::vector<std::string> notes;
};

// `gpus` are one server's GPU series; `server_power` its whole-box series or null; `load` the same
// server's load. Fails when they do not overlap in time, or the load does not say when the engine
// had work (neither vllm:num_requests_running nor vllm:iteration_tokens_total_count).
Result<CalibrationWindows> BuildCalibrationWindows(const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                   const telemetry::ServerPowerSeries* server_power,
                                                   const telemetry::ServingLoadSeries& load,
                                                   const WindowOptions& options);

// The sensor averaging window a power field implies on a GPU (NVML's documentation of
// nvmlDeviceGetPowerUsage and nvidia-smi's query fields): 1 s for power.draw.average; 0 for
// power.draw.instant; for power.draw, DCGM_FI_DEV_POWER_USAGE and the agent's power_w (all NVML's
// power usage) 1 s on Ampere and newer except GA100, 0 (one instant) on GA100 (an A100:
// `gpu_name` contains "A100") and older.
// Several runs' windows as one: their windows in the order given, `run_starts` marking each, their
// notes prefixed "run N: " when there are several. Fails when they differ in GPUs per server.
Result<CalibrationWindows> JoinRuns(std::vector<CalibrationWindows> runs);

double SensorAverageSecondsFor(const std::string& power_field, const std::string& gpu_name);

}  // namespace wattcut::polca
