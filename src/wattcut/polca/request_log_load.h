// The serving load a request log implies (request_log.h), for `polca calibrate --load LOG`: the
// log's requests replayed through the base config's server model (its continuous-batching
// scheduler and service timing) at the clocks the power file shows, scraped every second as
// vLLM's metrics would be (telemetry_synthesis.h). vLLM's own metrics, where they were recorded,
// are closer to what the server did: this load is only as right as the config's timing.
#pragma once

#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/request_log.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::polca {

// `gpus`: the server's GPU series; their first GPU's SM clocks give the clock steps (a change of
// more than 2 % of the maximum clock starts a step). The load covers the log's start to the power
// file's end.
Result<telemetry::ServingLoadTelemetry> LoadFromRequestLog(const ServerRequestLog& log,
                                                           const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                           const PolcaConfig& config);

}  // namespace wattcut::polca
