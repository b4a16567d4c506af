// Power telemetry read by telemetry/ (nvidia-smi, Prometheus, the agent's stream) as the per-server
// power trace the replay takes (power_trace.h).
//
// A server's power is its measured whole-server series when the telemetry has one (a BMC's
// Redfish or DCMI reading); else its GPUs' summed power with the non-GPU part from the config's
// model, as the simulator draws a server (polca_config.h ServerSpec):
//
//   server_w = other_idle_w + sum_gpu_w * (1 + other_w_per_gpu_w)
//
// GPUs of one server sampled at slightly different times (an nvidia-smi row per GPU, or one
// nvidia-smi per GPU) are aligned to the server's sample grid: the times of its first GPU (by
// index). At each grid time every other GPU contributes its reading nearest in time, within half
// the grid's median interval; a grid time at which some GPU has no reading that near is dropped
// (the server's power is not known then) and counted in a note. A server's GPUs' clocks are not
// used here.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_trace.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"

namespace wattcut::polca {

struct TelemetryPowerTrace {
  PowerTrace trace;
  int measured_servers = 0;        // from a whole-server series
  int modelled_servers = 0;        // from GPUs alone: non-GPU part from the config's model
  std::vector<std::string> notes;  // the telemetry's notes and the alignment's
};

Result<TelemetryPowerTrace> PowerTraceFromTelemetry(const telemetry::PowerTelemetry& telemetry,
                                                    const ServerSpec& server);

}  // namespace wattcut::polca
