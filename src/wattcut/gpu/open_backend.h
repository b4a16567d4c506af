// Opens the backend a command line asks for: --backend nvml|simulated, --dry-run.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/nvml_library.h"

namespace wattcut {

struct BackendOptions {
  std::string kind = "nvml";                             // "nvml" or "simulated"
  bool dry_run = false;                                  // wrap in DryRunBackend
  std::string nvml_library = nvml::kDefaultLibraryName;  // for "nvml"
  std::string simulated_model = "a100-sxm";              // for "simulated"
  int simulated_gpus = 1;                                // for "simulated"
  std::function<void(const std::string&)> dry_run_log;   // default: stderr
};

Result<std::unique_ptr<GpuBackend>> OpenBackend(const BackendOptions& options);

}  // namespace wattcut
