// Per-GPU and server power written as `wattcut agent`'s GET /v1/readings/stream writes it (one
// JSON object a line, keys in name order, as the agent's JSON library orders them; see
// agent_readings_stream.h for the reader): the files `polca synthesize` makes for calibrate and
// replay.
#pragma once

#include <string>

#include "wattcut/telemetry/gpu_power_telemetry.h"

namespace wattcut::telemetry {

// `gpus`: the GPUs of one server, their samples at the same times (power_w, sm_clock_mhz);
// `server`: that server's whole-box power at those times (source "redfish"), or null. A line per
// sample time, with power_limit_w and an energy_mj counting from 0.
std::string AgentReadingsStreamText(const PowerTelemetry& gpus, const ServerPowerSeries* server, double power_limit_w);

}  // namespace wattcut::telemetry
