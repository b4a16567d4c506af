// `wattcut polca replay`: the row power policy (row_power_policy.h, the one the simulator and
// the live controller run) over recorded per-server power (power_trace.h), with the effect of
// its ceilings estimated through the configured power model. Pure: trace + config -> result.
//
// Every control.telemetry_period_s, from the trace's first reading to its last (tick k at
// k x period):
//   * each server's recorded power is its latest reading at or before the tick (before its
//     first reading: its first reading). A server with no reading for longer than the gap
//     (ReplayOptions::gap_s) counts at its last reading until then and afterwards at the
//     highest reading it had so far, the live controller's rule for a server it cannot see
//     (row_control/row_controller.h); such gaps are reported;
//   * "before" is the row's recorded power; "after" is each server's power estimated under the
//     ceilings in effect at the tick (EstimateServerPowerW), summed;
//   * the policy gets "after" as its reading (it sees the row its own ceilings shape, as the
//     live controller would), measured at the tick, or at the oldest last reading of a server in
//     a gap (so a gap may escalate or brake, never release once older than max_reading_age_s),
//     and decides telemetry_delay_s later; its commands land through ControlActuation after the
//     actuation or brake latency. Readings that would arrive after the trace's end are not
//     decided.
// The recorded power is taken as the servers' unconstrained power (GPUs at their max clock).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_trace.h"
#include "wattcut/polca/row_power_policy.h"

namespace wattcut::polca {

// Periods one replay may hold in memory (40 bytes each): 5 million is 200 MB, 58 days at 1 s.
inline constexpr int64_t kMaxReplayPeriods = 5'000'000;
// Servers x periods of one replay (each a few floating-point operations): about ten seconds.
inline constexpr double kMaxReplayServerPeriods = 2e9;

struct ReplayOptions {
  PolicyKind policy = PolicyKind::kPolca;
  // A server missing longer than this is a gap. 0: 3 x max(telemetry period, the trace's
  // median interval between readings).
  double gap_s = 0;
};

struct ReplayPeriod {
  double time_s = 0;                         // the tick, seconds after the trace's first reading
  double measured_at_s = 0;                  // the reading's time as the policy gets it (< time_s during a gap)
  double before_w = 0;                       // row power as recorded
  double after_w = 0;                        // row power estimated under the ceilings in effect
  PolicyLevel level = PolicyLevel::kNormal;  // the policy's state after the tick's decisions
  bool brake = false;                        // brake requested
};

// A server with no reading for longer than the gap.
struct TraceGap {
  std::string server;
  double from_s = 0;  // its last reading before (0 when it had none yet)
  double to_s = 0;    // its next reading (the trace's end when none)
};

struct ReplayResult {
  PolicyKind policy = PolicyKind::kPolca;
  double budget_w = 0;
  double period_s = 0;
  double gap_s = 0;
  int servers = 0;
  int low_priority_servers = 0;
  bool priorities_from_trace = false;
  std::vector<ReplayPeriod> periods;
  std::vector<ControlCommand> commands;  // every command, in the order issued
  std::vector<TraceGap> gaps;
  std::vector<std::string> warnings;  // gaps and other things the user should know
  std::array<double, 4> level_s{};    // time at each PolicyLevel (period per tick)
  double brake_s = 0;                 // time with the brake requested
  int low_commands = 0;
  int high_commands = 0;
  int brake_commands = 0;
  int brake_engagements = 0;
  // Fractions of the budget.
  double before_peak = 0;
  double before_p99 = 0;
  double after_peak = 0;
  double after_p99 = 0;
  double before_energy_kwh = 0;
  double after_energy_kwh = 0;
};

// The effect model: a server that drew `recorded_w` with its GPUs at the max clock, estimated
// at `limits` (clock and optional per-GPU power cap), through the simulator's power model
// (inference_power_model.h, server_model.h):
//   gpu_w   = (recorded_w - other_idle_w) / (gpus x (1 + other_w_per_gpu_w))
//   gpu_w'  = idle_w + max(0, gpu_w - idle_w) x (f / f_max)^gamma, then min(gpu_w', cap_w)
//   result  = recorded_w - gpus x (1 + other_w_per_gpu_w) x (gpu_w - gpu_w')   (when gpu_w > idle_w)
// gamma is the smaller of the prompt and token power exponents: the phase mix is unknown, and
// the smaller one credits the ceiling with the smaller saving. A server at or below its idle
// power is left as recorded.
double EstimateServerPowerW(const PolcaConfig& config, double recorded_w, const GpuLimits& limits);

// Which servers are low priority: the trace's column when it has one, else the config's
// low_priority_share of the servers (rounded), spread evenly in the order of their first row,
// as the simulator spreads them.
std::vector<Priority> ReplayPriorities(const PowerTrace& trace, double low_priority_share);

Result<ReplayResult> ReplayPowerTrace(const PowerTrace& trace, const PolcaConfig& config, const ReplayOptions& options);

}  // namespace wattcut::polca
