// The NVML backend: real NVIDIA GPUs through libnvidia-ml.so.1 (see nvml_library.h).
#pragma once

#include <memory>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/nvml_library.h"

namespace wattcut {

// Loads NVML from `library_name` and checks that it sees at least one GPU.
Result<std::unique_ptr<GpuBackend>> OpenNvmlBackend(const std::string& library_name = nvml::kDefaultLibraryName);

}  // namespace wattcut
