#include "wattcut/gpu/gpu_backend.h"

#include <algorithm>

namespace wattcut {

Result<int> MaxMemoryClockMhz(GpuBackend& backend, int gpu) {
  auto clocks = backend.SupportedMemoryClocksMhz(gpu);
  if (!clocks.ok()) return clocks.error();
  if (clocks->empty()) return Error{"GPU " + std::to_string(gpu) + " reports no memory clocks"};
  return *std::max_element(clocks->begin(), clocks->end());
}

Result<std::vector<int>> SupportedSmClocksMhz(GpuBackend& backend, int gpu) {
  auto memory = MaxMemoryClockMhz(backend, gpu);
  if (!memory.ok()) return memory.error();
  auto clocks = backend.SupportedGraphicsClocksMhz(gpu, *memory);
  if (!clocks.ok()) return clocks.error();
  std::vector<int> sorted = std::move(clocks).value();
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted;
}

Status LockMemoryClockToMax(GpuBackend& backend, int gpu) {
  auto memory = MaxMemoryClockMhz(backend, gpu);
  if (!memory.ok()) return memory.error();
  return backend.LockMemoryClocks(gpu, *memory, *memory);
}

Status ResetPowerLimit(GpuBackend& backend, int gpu) {
  auto limits = backend.PowerLimits(gpu);
  if (!limits.ok()) return limits.error();
  return backend.SetPowerLimitMw(gpu, limits->default_mw);
}

Status CheckGpuIndex(int gpu, int count) {
  if (gpu < 0 || gpu >= count) {
    return Error{"GPU " + std::to_string(gpu) + " does not exist (" + std::to_string(count) +
                 (count == 1 ? " GPU)" : " GPUs)")};
  }
  return Status::Ok();
}

std::string ClockRangeText(const std::vector<int>& clocks_mhz) {
  if (clocks_mhz.empty()) return "none";
  return std::to_string(clocks_mhz.front()) + ".." + std::to_string(clocks_mhz.back()) + " MHz (" +
         std::to_string(clocks_mhz.size()) + " clocks)";
}

std::string GpuCall(const char* function, int gpu, const std::string& args) {
  return std::string(function) + "(GPU " + std::to_string(gpu) + (args.empty() ? "" : ", " + args) + ")";
}

}  // namespace wattcut
