// Everything the POLCA simulator needs to know about the hardware, the served model, the
// row, the workload and the policy, in one value. It comes from a built-in default
// ("a100", "h100") or from a plain-text file the user writes from their own
// measurements:
//
//   # comments start with '#'; one `section.key = value` per line
//   gpu.tdp_w = 400
//   policy.t2 = 0.89
//
// A file is applied on top of a built-in default (`base = a100` on its first setting
// line picks which; a100 otherwise), so it only needs the keys it changes. Unknown
// keys, a key set twice (both lines named), unparsable values, values outside
// row_limits.h and inconsistent settings (T1 >= T2, a release level above its
// threshold, ...) are errors naming the file, line and key. A leading UTF-8 byte order
// mark is skipped; quoted values go through PrintableText.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/plan/planner_defaults.h"

namespace wattcut::polca {

// One GPU's power and speed as a function of phase, load and locked SM clock.
struct GpuSpec {
  std::string name;
  double tdp_w = 400;
  double idle_w = 80;
  double max_freq_mhz = 1410;
  double min_freq_mhz = 210;
  // Prompt (prefill) phase power at max clock: `prompt_w_small` for a tiny prefill,
  // rising linearly to `prompt_w_large` at `prompt_tokens_for_peak` tokens and above.
  double prompt_w_small = 300;
  double prompt_w_large = 420;
  double prompt_tokens_for_peak = 4096;
  // Token (decode) phase power at max clock: linear in batch size from 1 to max_batch.
  double token_w_batch1 = 180;
  double token_w_full_batch = 300;
  // Above-idle power scales as (f / f_max)^exponent when the clock is locked to f.
  double prompt_power_freq_exponent = 1.2;
  double token_power_freq_exponent = 1.0;
  // Fraction of a phase's time that scales with 1/f (the rest is memory/communication
  // bound): duration(f) = duration(f_max) * ((1 - c) + c * f_max / f).
  double prompt_compute_fraction = 0.9;
  double token_compute_fraction = 0.25;
};

// One inference server: GPUs plus everything else in the box.
struct ServerSpec {
  int gpus = 8;
  double other_idle_w = 1700;  // CPUs, memory, NICs, NVSwitches, fans with GPUs idle
  // Extra non-GPU watts per GPU watt (fans, voltage regulators, power-supply loss):
  // server = other_idle_w + gpus * gpu_w * (1 + other_w_per_gpu_w).
  double other_w_per_gpu_w = 0.15;
  double nameplate_w = 6500;
};

// How long the served model (one replica per server) takes per phase at max clock.
struct ServiceSpec {
  std::string model = "BLOOM-176B";
  double prompt_s_base = 0.02;
  double prompt_s_per_token = 2.8e-4;
  double token_iteration_s_base = 0.047;
  double token_iteration_s_per_request = 5e-4;
  int max_batch = 32;             // requests decoding together (continuous batching)
  int max_prefill_tokens = 8192;  // prompt tokens batched into one prefill (>= 1 request)
};

struct RowSpec {
  int baseline_servers = 40;
  // The row's power budget is budget_w when set (> 0), else baseline_servers * provisioned_w_per_server.
  double provisioned_w_per_server = 5700;
  double budget_w = 0;
  double low_priority_share = 0.5;  // of servers, and of requests
  // Of the row's servers (added ones included), the share that trains instead of serving
  // (training.*); 0: an inference-only row. The rest serve, low_priority_share of them low priority.
  double training_share = 0;
};

// How one hour of trace becomes days of arrivals (see arrival_expansion.h).
struct WorkloadSpec {
  double peak_requests_per_server_s = 0.7;  // arrival rate per server at the daily peak
  // The same load stated by work (row_load.h): the busy share of a serving server's capacity at
  // the peak, from the trace's requests and the service timing. 0: not set; when set (up to 1),
  // it replaces peak_requests_per_server_s for every run.
  double peak_utilization = 0;
  double diurnal_trough = 0.5;  // rate at the daily low, as a fraction of peak
  double peak_hour = 14;        // hour of day of the peak (0..24)
  double weekend_factor = 1.0;  // rate multiplier on days 6 and 7 of each week
};

// Thresholds as fractions of the row budget, and what happens at each.
struct PolicySpec {
  double t1 = 0.80;
  double t1_release = 0.75;
  double t2 = 0.89;
  double t2_release = 0.84;
  double brake = 1.00;
  double brake_release = 0.89;
  double t1_low_mhz = 1275;   // POLCA: low priority above T1
  double t2_low_mhz = 1110;   // POLCA: low priority above T2
  double t2_high_mhz = 1305;  // POLCA: high priority if still above T2
  double brake_mhz = 288;
  // Reactive power capping baseline: per-GPU caps above T1 and T2.
  double cap_t1_w = 350;
  double cap_t2_w = 300;
  // Power-capped training (docs/power-capped-training.md): the peak 1-s power per GPU a
  // training server's job is asked to run at (the planning server's power target) above T1
  // and above T2, where an inference server of low priority would be locked. Defaults: the
  // power-cap baseline's caps.
  double t1_training_w = 350;
  double t2_training_w = 300;
  // The headroom policy (row_power_policy.h; docs/polca.md): escalates one level while the row
  // power it expects when a command sent now lands (power_forecast.h) is above headroom_guard, and
  // releases one when that stays below headroom_release for headroom_window_s under the level.
  double headroom_guard = 0.97;
  double headroom_release = 0.92;
  double headroom_window_s = 60;
  // The forecast's record (forecast_record.h): when the median of its errors over the last hour is
  // below -headroom_correction_deadband (it over-predicted the row by more than that), the forecast
  // is lowered by that median. 1 turns the correction off.
  double headroom_correction_deadband = 0.02;
  // Its ladder: level t1 locks low priority to t1_low_mhz (POLCA's T1 action); level t2-low, its
  // middle level, locks low priority to headroom_mid_low_mhz and high priority to
  // headroom_mid_high_mhz (decode +3.7 % and +0.8 % on the A100: about the 5:1 ratio of the two
  // classes' P50 SLOs); level t2-high is POLCA's deepest (t2_low_mhz and t2_high_mhz).
  double headroom_mid_low_mhz = 1230;
  double headroom_mid_high_mhz = 1365;
};

// The training job of the row's training servers (polca/training_job.h): one pipeline per
// server, from a stage profile, planned as `wattcut frontier` plans it.
struct TrainingSpec {
  // Stage profile CSV (`wattcut frontier --profile`); required when row.training_share > 0. In a
  // config file a relative path is relative to the file's folder.
  std::string profile;
  int stages = 8;  // pipeline stages; server.gpus / stages GPUs per stage (tensor parallel)
  int microbatches = 96;
  double p2p_power_w = 83.64;  // blocking power of a waiting GPU
  std::string schedule = "1f1b";
  double unit_time_s = kDefaultUnitTimeS;  // the planner's time unit
  // The timelines are averaged over steps this long (events per server per second ~ 1 / step).
  double timeline_step_s = 0.25;
  // What the job runs with no power target under training control power-target: "fastest"
  // (the frontier's fastest plan, what the planning server deploys) or "all-max" (the unmanaged
  // job, as under locks).
  std::string plan_without_target = "fastest";
  // Where each training server is in its iteration at time 0: "random" (seeded, uniform: the
  // servers run independent jobs, or pipelines whose peaks do not line up) or "aligned" (all at
  // the start: the data-parallel replicas of one job, in step, peaks together).
  std::string iteration_phase = "random";
  // L of the planning server's apply step (docs/server.md): a power target set now changes the
  // plan from step S_max + 1 + ceil(2 L / iteration time), S_max the step in progress. L = 2 x
  // poll interval + 1 s: 2 s for a job of up to 1,000 ranks.
  double apply_margin_s = 2;
};

struct ControlSpec {
  double telemetry_period_s = 1.0;  // row power is averaged and read this often
  double telemetry_delay_s = 2.0;   // a reading arrives this late
  double actuation_latency_s = 40;  // out-of-band (BMC) lock/cap command; in-band ~0.01
  double brake_latency_s = 5;
  double max_reading_age_s = 10;      // older readings never release a lock
  double power_cap_response_s = 1.0;  // a GPU power cap bites only this long into a phase
  // How long a training job has to run a plan under its power target, on every rank, after the
  // target is set (or the job's deployment changes) before the live controller puts clock
  // ceilings on its servers (docs/power-capped-training.md). Not zeroed by in-band control: the
  // job changes plan at a step every rank agrees on. Default: the out-of-band lock's latency.
  double training_response_s = 40;
};

struct PolcaConfig {
  std::string source = "built-in a100";
  GpuSpec gpu;
  ServerSpec server;
  ServiceSpec service;
  RowSpec row;
  WorkloadSpec workload;
  PolicySpec policy;
  ControlSpec control;
  TrainingSpec training;

  double row_budget_w() const {
    return row.budget_w > 0 ? row.budget_w : row.baseline_servers * row.provisioned_w_per_server;
  }
};

// Built-in defaults: "a100" (DGX-A100), "h100" (HGX-H100) or "mi300x" (8 x MI300X).
Result<PolcaConfig> BuiltInConfig(const std::string& name);
// Names accepted by BuiltInConfig.
std::vector<std::string> BuiltInConfigNames();

// Parses config text; `source_name` stands for the file in messages.
Result<PolcaConfig> ParseConfig(const std::string& text, const std::string& source_name);
// Fails on a directory, an unreadable file or one over kMaxConfigFileBytes.
Result<PolcaConfig> ReadConfigFile(const std::string& path);

// Checks the settings against each other (thresholds ordered, clocks in range, shares
// in [0, 1], ...). ParseConfig calls it; call it again after changing a config in code.
Status Validate(const PolcaConfig& config);

// The config as text ParseConfig reads back (every key, with a comment per section).
std::string FormatConfig(const PolcaConfig& config);

}  // namespace wattcut::polca
