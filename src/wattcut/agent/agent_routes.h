// The node agent's HTTP API (docs/agent.md, openapi.yaml) on one listener: who the caller is
// (the Unix socket's peer credentials, or a TCP bearer token and connection), what its scopes
// allow, the request parsed (agent_requests.h), the node agent asked (node_agent.h), the answer
// written as JSON with the status of its error code (http/http_status.h).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "wattcut/agent/agent_caller.h"
#include "wattcut/agent/agent_tokens.h"
#include "wattcut/agent/node_agent.h"
#include "wattcut/agent/reading_streams.h"
#include "wattcut/cpu/cpu_energy_meter.h"
#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

class AgentCounters;
class ServerPowerMeter;

// What the routes of both listeners share; owned by the service, outlives the listeners.
struct AgentRouteContext {
  NodeAgent* node = nullptr;
  const AgentTokens* tokens = nullptr;  // nullptr: no --token-file
  const AgentCounters* counters = nullptr;
  ServerPowerMeter* power = nullptr;
  cpu::CpuEnergyMeter* cpu = nullptr;  // nullptr: no RAPL (readings' "cpus" is null)
  std::string hostname;
  std::string version;
  const std::atomic<bool>* stopping = nullptr;  // ends streams
};

// src/wattcut/agent/openapi.yaml, served at GET /openapi.yaml.
const std::string& AgentOpenApiYaml();

void AddAgentRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    OpenStreams open_streams = std::make_shared<std::atomic<int>>(0));

}  // namespace wattcut::agent
