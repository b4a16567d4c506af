// `wattcut agent` as an object: the node agent (node_agent.h) behind its two listeners, the Unix
// socket (the node's own processes, identified by SO_PEERCRED) and optionally TCP (bearer tokens;
// the row controller, Prometheus), serving the API of agent_routes.h on threads of their own.
// Start returns once both listen (or with the reason one cannot); Stop (or the destructor) stops
// serving, ends every lease (undoing what its holder set) and keeps the ceilings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "wattcut/agent/node_agent.h"
#include "wattcut/agent/server_power.h"
#include "wattcut/agent/zeusd_token.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/http/bounded_http_server.h"

namespace wattcut::agent {

struct AgentServiceOptions {
  std::string socket_path = wattcut::kDefaultAgentSocket;  // empty: no Unix socket
  unsigned socket_mode = 0660;
  std::string socket_group;  // a name or a gid; empty: the agent's own group
  std::string tcp_host;      // empty: no TCP listener
  int tcp_port = 7788;       // 0: any free port (tests)
  std::string token_file;    // empty: TCP serves loopback read requests only
  std::string hostname;      // empty: gethostname()
  NonGpuPowerModel non_gpu_power;
  std::optional<RedfishSettings> redfish;
  NodeAgentOptions node;
  http::ConnectionLimits connections;
  // zeusd's API beside /v1 (zeusd_routes.h): the groups served (zeusd's default: all three), the
  // signing key file of its tokens (empty: no authentication; over TCP then loopback only), and
  // the powercap tree CPU and DRAM energy come from (cpu-read is dropped, with a log line, where
  // it has no RAPL zone or its counters cannot be read).
  std::vector<ZeusdGroup> zeusd_groups = {ZeusdGroup::kGpuControl, ZeusdGroup::kGpuRead, ZeusdGroup::kCpuRead};
  std::string zeusd_signing_key_file;
  std::string powercap_root = "/sys/class/powercap";
  double cpu_power_window_s = 0.1;
  // Per listener: a request holds one while it is served; a readings stream (written by the
  // listener's stream thread) and a connection waiting for its next request hold none.
  int http_threads = 32;
};

class AgentService {
 public:
  static Result<std::unique_ptr<AgentService>> Start(AgentServiceOptions options, std::unique_ptr<GpuBackend> backend);
  ~AgentService();
  void Stop();

  int tcp_port() const { return tcp_port_; }
  const std::string& socket_path() const { return options_.socket_path; }
  NodeAgent& node() { return *node_; }
  // What start-up found that is not wrong but worth a line (no RAPL: no CPU energy), for the caller
  // to show once it serves.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Impl;
  AgentService() = default;
  AgentServiceOptions options_;
  std::unique_ptr<NodeAgent> node_;
  std::unique_ptr<Impl> impl_;
  int tcp_port_ = -1;
  std::vector<std::string> notes_;
};

}  // namespace wattcut::agent
