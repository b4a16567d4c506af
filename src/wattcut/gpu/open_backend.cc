#include "wattcut/gpu/open_backend.h"

#include <cstdlib>

#include "wattcut/base/printable_text.h"
#include "wattcut/gpu/agent_backend.h"
#include "wattcut/gpu/dry_run_backend.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/rocm_smi_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {

std::string AgentAddress(const BackendOptions& options) {
  if (!options.agent.empty()) return options.agent;
  const char* from_environment = std::getenv(kAgentSocketVariable);
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return kDefaultAgentSocket;
}

Result<std::unique_ptr<GpuBackend>> OpenBackend(const BackendOptions& options) {
  std::unique_ptr<GpuBackend> backend;
  if (options.kind == "nvml") {
    auto nvml_backend = OpenNvmlBackend(options.nvml_library);
    if (!nvml_backend.ok()) return nvml_backend.error();
    backend = std::move(nvml_backend).value();
  } else if (options.kind == "rocm-smi") {
    auto rocm_backend = OpenRocmSmiBackend(options.rocm_smi_library);
    if (!rocm_backend.ok()) return rocm_backend.error();
    backend = std::move(rocm_backend).value();
  } else if (options.kind == "simulated") {
    auto simulated = SimulatedBackend::Create(options.simulated_model, options.simulated_gpus);
    if (!simulated.ok()) return simulated.error();
    backend = std::move(simulated).value();
  } else if (options.kind == "agent") {
    auto endpoint = AgentEndpoint(AgentAddress(options), options.agent_token_file);
    if (!endpoint.ok()) return endpoint.error();
    AgentBackendOptions agent;
    agent.endpoint = std::move(*endpoint);
    agent.lease_ttl_s = options.agent_lease_ttl_s;
    auto opened = AgentBackend::Open(std::move(agent));
    if (!opened.ok()) return opened.error();
    backend = std::move(opened).value();
  } else {
    return Error{"unknown GPU backend '" + PrintableText(options.kind) + "' (known: nvml, rocm-smi, simulated, agent)"};
  }
  if (options.dry_run) backend = std::make_unique<DryRunBackend>(std::move(backend), options.dry_run_log);
  return backend;
}

}  // namespace wattcut
