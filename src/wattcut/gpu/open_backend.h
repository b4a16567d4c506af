// Opens the backend a command line asks for: --backend nvml|rocm-smi|simulated, --agent SOCKET|URL, --dry-run.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/nvml_library.h"
#include "wattcut/gpu/rocm_smi_library.h"

namespace wattcut {

struct BackendOptions {
  std::string kind = "nvml";                                     // "nvml", "rocm-smi", "simulated" or "agent"
  bool dry_run = false;                                          // wrap in DryRunBackend
  std::string nvml_library = nvml::kDefaultLibraryName;          // for "nvml"
  std::string rocm_smi_library = rocm_smi::kDefaultLibraryName;  // for "rocm-smi"
  std::string simulated_model = "a100-sxm";                      // for "simulated"
  int simulated_gpus = 1;                                        // for "simulated"
  // For "agent" (agent_backend.h): the node agent's socket path or TCP URL; empty:
  // $WATTCUT_AGENT_SOCKET, else /run/wattcut/agent.sock. The token file is for TCP (or for a
  // socket caller that needs a token's scope): its first token line, "TOKEN" or "SCOPE TOKEN".
  std::string agent;
  std::string agent_token_file;
  int agent_lease_ttl_s = 10;
  std::function<void(const std::string&)> dry_run_log;  // default: stderr
};

// The agent `options` names for kind "agent": options.agent, else $WATTCUT_AGENT_SOCKET, else the
// default socket.
std::string AgentAddress(const BackendOptions& options);

Result<std::unique_ptr<GpuBackend>> OpenBackend(const BackendOptions& options);

}  // namespace wattcut
