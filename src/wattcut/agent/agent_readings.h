// What the node agent's readings routes answer (GET /v1/readings, /v1/readings/server, its stream,
// and /metrics): every GPU read once, with the server's power (server_power.h) and the CPUs' energy
// (cpu/), put together.
#pragma once

#include <nlohmann/json.hpp>

#include "wattcut/agent/agent_metrics.h"
#include "wattcut/agent/agent_routes.h"

namespace wattcut::agent {

// GET /v1/readings: time_s, each GPU's readings, the server's power (null without a meter) and the
// CPU packages' energy (null without RAPL; {"error": ...} for a failed read).
nlohmann::json ReadingsJson(const AgentRouteContext& context);

// GET /v1/readings/server: the server's power alone, for the row controller (it reads every
// server every period: an 8-GPU answer of /v1/readings is about 1.5 KB, this one about 150 bytes).
// `instant`: the GPUs' part from NVML's instant field where every GPU has it (gpu_power says which
// was used: "instant" or "power_usage").
nlohmann::json ServerReadingJson(const AgentRouteContext& context, bool instant);

// What GET /metrics shows: the readings and the controls of every GPU, and the server's power.
AgentMetricsSnapshot MetricsSnapshot(const AgentRouteContext& context);

}  // namespace wattcut::agent
