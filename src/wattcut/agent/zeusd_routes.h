// zeusd's HTTP API (Zeus's daemon, 0.5) on the agent's listeners (issue 29), beside its own /v1 API:
// Zeus's clients (ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT, ZEUSD_TOKEN) talk to the agent as to zeusd.
// Paths, query parameters, units (mW, mJ, uJ) and JSON shapes are zeusd's; so are the order in
// which a request is refused and the statuses and bodies of the refusals (docs/agent.md, "Running
// Zeus through wattcut"):
//   1. the API group of the path (gpu-control: /gpu/set_*, /gpu/reset_*; gpu-read: other /gpu/;
//      cpu-read: /cpu/) not enabled: 404 {"error":"API group '<g>' is not enabled on this server."};
//   2. with a signing key, every path but /discover and /time needs a valid token (401, zeusd's
//      messages, WWW-Authenticate: Bearer realm="zeusd") holding the group as a scope (403);
//      without one, /auth/ paths are 404 and, over TCP, only loopback peers are answered (403);
//   3. an unknown path or method: 404 with an empty body;
//   4. a query parameter unknown, repeated, missing or malformed: 400, text/plain
//      "Query deserialize error: ...";
//   5. the handler: device lists and per-device errors as zeusd writes them.
// Stricter than zeusd: a setter acts under the caller's lease, taken implicitly (the process on
// the socket, the connection over TCP; NodeAgent::ImplicitLeaseHolder), so what it set is undone
// when it exits, and it never lifts a row ceiling; over TCP without a signing key the setters are
// refused (403) and reads answered to loopback peers only.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "wattcut/agent/zeusd_token.h"
#include "wattcut/cpu/cpu_energy_meter.h"
#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

struct AgentRouteContext;
enum class AgentTransport;

// What the zeusd API serves with; owned by the service, outlives the listeners.
struct ZeusdApiContext {
  std::vector<ZeusdGroup> enabled_groups;        // in the order configured (zeusd's --enable)
  const ZeusdSigningKey* signing_key = nullptr;  // nullptr: no authentication
  cpu::CpuEnergyMeter* cpu = nullptr;            // nullptr: no RAPL on this machine (cpus: [])
  double cpu_power_window_s = 0.1;               // GET /cpu/get_power's two readings apart, and
                                                 // /cpu/stream_power's period (zeusd: 10 Hz)
  double gpu_stream_period_s = 0.05;             // /gpu/stream_power's (zeusd: 20 Hz)
};

// `open_streams`: the listener's count of open streams, shared with AddAgentRoutes.
void AddZeusdRoutes(http::BoundedHttpServer& server, AgentTransport transport, const AgentRouteContext& context,
                    const ZeusdApiContext& zeusd, std::shared_ptr<std::atomic<int>> open_streams);

}  // namespace wattcut::agent
