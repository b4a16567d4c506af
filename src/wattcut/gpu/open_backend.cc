#include "wattcut/gpu/open_backend.h"

#include "wattcut/base/printable_text.h"
#include "wattcut/gpu/dry_run_backend.h"
#include "wattcut/gpu/nvml_backend.h"
#include "wattcut/gpu/simulated_backend.h"

namespace wattcut {

Result<std::unique_ptr<GpuBackend>> OpenBackend(const BackendOptions& options) {
  std::unique_ptr<GpuBackend> backend;
  if (options.kind == "nvml") {
    auto nvml_backend = OpenNvmlBackend(options.nvml_library);
    if (!nvml_backend.ok()) return nvml_backend.error();
    backend = std::move(nvml_backend).value();
  } else if (options.kind == "simulated") {
    auto simulated = SimulatedBackend::Create(options.simulated_model, options.simulated_gpus);
    if (!simulated.ok()) return simulated.error();
    backend = std::move(simulated).value();
  } else {
    return Error{"unknown GPU backend '" + PrintableText(options.kind) + "' (known: nvml, simulated)"};
  }
  if (options.dry_run) backend = std::make_unique<DryRunBackend>(std::move(backend), options.dry_run_log);
  return backend;
}

}  // namespace wattcut
