// The node agent's HTTP API (docs/agent.md, openapi.yaml) on one listener: who the caller is
// (the Unix socket's peer credentials, or a TCP bearer token and connection), what its scopes
// allow, the request parsed (agent_requests.h), the node agent asked (node_agent.h), the answer
// written as JSON with the status of its error code (http/http_status.h).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "wattcut/agent/agent_tokens.h"
#include "wattcut/agent/node_agent.h"
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

enum class AgentTransport { kUnixSocket, kTcp };

// Readings streams open at once on one listener, of either API (/v1's NDJSON, zeusd's SSE): half
// its workers (AgentServiceOptions's 32), so that streams never take the workers a setter, a
// renewal or a reading needs. One more is 503.
inline constexpr int kMaxReadingStreams = 16;
// The streams open on one listener; shared by its two APIs' routes.
using OpenStreams = std::shared_ptr<std::atomic<int>>;

// Who asks, and what it may do.
struct AgentCaller {
  LeaseHolder holder;
  bool read = false;
  bool train = false;
  bool row = false;
  bool admin = false;  // root on the Unix socket: registers and ends batch jobs
  bool Allows(AgentScope scope) const;
};

// The caller of a request on `transport` (the connection comes from BoundedHttpServer), or the
// refusal: 401 for a missing or unknown token where one is needed (or a job's credential after the
// job ended, or over TCP), 403 for a TCP peer beyond loopback on an agent without tokens. On the
// Unix socket a bearer token is either one of the token file's or a batch job's credential
// (`node`'s jobs; nullptr: none): the caller then holds leases as the job's process.
struct Refusal {
  int status = 0;
  std::string message;
};
std::optional<Refusal> IdentifyCaller(AgentTransport transport, const http::ConnectionInfo& connection,
                                      const std::string& authorization, const AgentTokens* tokens, NodeAgent* node,
                                      AgentCaller& caller);

// src/wattcut/agent/openapi.yaml, served at GET /openapi.yaml.
const std::string& AgentOpenApiYaml();

void AddAgentRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    OpenStreams open_streams = std::make_shared<std::atomic<int>>(0));

}  // namespace wattcut::agent
