// What `wattcut agent`'s GET /v1/readings/stream writes (agent/agent_routes.cc), recorded with
//
//   curl -sN --unix-socket /run/wattcut/agent.sock 'http://agent/v1/readings/stream?interval_s=0.25' > FILE
//
// NDJSON, one reading a line:
//
//   {"time_s":1714564800.25,"gpus":[{"index":0,"power_w":312.4,"energy_mj":123456789,
//     "sm_clock_mhz":1410,"power_limit_w":700,"errors":{}}],
//    "server":{"power_w":4210.5,"gpu_power_w":2499.2,"non_gpu_power_w":1711.3,
//              "source":"redfish","redfish_age_s":0.8}}
//
// A field the agent could not read is null (its NVML error in "errors"); "server" is null when the
// agent has no server power meter. Each GPU becomes a GpuPowerSeries of `server` (the file's name
// without extension by default); the server object becomes a ServerPowerSeries only when its
// source is "redfish": a "model" server power is the agent's estimate from its GPUs, not a
// measurement, and is skipped with a note. A GPU reading with a null power is skipped and counted.
//
// Every line must be one JSON object (a key twice is refused) with increasing time_s; a bad line is
// an error "FILE:LINE: gpus[2].power_w: expected ..., got ...". A last line without a line end
// (the curl was stopped mid-line) is noted and skipped. Fields this reader does not use are not
// checked, so that a newer agent's additions read.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"

namespace wattcut::telemetry {

Result<PowerTelemetry> ParseAgentReadingsStream(const std::string& text, const std::string& source_name,
                                                const std::string& server);
// At most kMaxTelemetryFileBytes, refused before it is read; `server` "": the file's stem.
Result<PowerTelemetry> ReadAgentReadingsStream(const std::string& path, const std::string& server);

}  // namespace wattcut::telemetry
