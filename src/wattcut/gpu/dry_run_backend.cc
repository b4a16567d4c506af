#include "wattcut/gpu/dry_run_backend.h"

#include <algorithm>
#include <iostream>

namespace wattcut {

DryRunBackend::DryRunBackend(std::unique_ptr<GpuBackend> inner, std::function<void(const std::string&)> log)
    : inner_(std::move(inner)), log_(std::move(log)) {}

void DryRunBackend::Log(const std::string& line) {
  if (log_) {
    log_(line);
  } else {
    std::cerr << line << "\n";
  }
}

Status DryRunBackend::CheckIndex(int gpu) {
  auto count = inner_->DeviceCount();
  if (!count.ok()) return count.error();
  return CheckGpuIndex(gpu, *count);
}

Status DryRunBackend::LockGpuClocks(int gpu, int min_mhz, int max_mhz) {
  auto clocks = SupportedSmClocksMhz(*inner_, gpu);
  if (!clocks.ok()) return clocks.error();
  if (clocks->empty() || min_mhz > max_mhz || min_mhz < clocks->back() || max_mhz > clocks->front()) {
    return Error{"cannot lock GPU " + std::to_string(gpu) + " SM clocks to " + std::to_string(min_mhz) + "-" +
                 std::to_string(max_mhz) + " MHz: supported " +
                 (clocks->empty() ? std::string("none")
                                  : std::to_string(clocks->back()) + "-" + std::to_string(clocks->front())) +
                 " MHz"};
  }
  Log("dry run: would lock GPU " + std::to_string(gpu) + " SM clocks to " + std::to_string(min_mhz) + "-" +
      std::to_string(max_mhz) + " MHz");
  return Status::Ok();
}

Status DryRunBackend::ResetGpuClocks(int gpu) {
  if (Status s = CheckIndex(gpu); !s.ok()) return s;
  Log("dry run: would reset GPU " + std::to_string(gpu) + " SM clocks");
  return Status::Ok();
}

Status DryRunBackend::LockMemoryClocks(int gpu, int min_mhz, int max_mhz) {
  auto clocks = inner_->SupportedMemoryClocksMhz(gpu);
  if (!clocks.ok()) return clocks.error();
  const auto supported = [&](int mhz) { return std::find(clocks->begin(), clocks->end(), mhz) != clocks->end(); };
  if (min_mhz > max_mhz || !supported(min_mhz) || !supported(max_mhz)) {
    return Error{"cannot lock GPU " + std::to_string(gpu) + " memory clocks to " + std::to_string(min_mhz) + "-" +
                 std::to_string(max_mhz) + " MHz: not supported memory clocks"};
  }
  Log("dry run: would lock GPU " + std::to_string(gpu) + " memory clocks to " + std::to_string(min_mhz) + "-" +
      std::to_string(max_mhz) + " MHz");
  return Status::Ok();
}

Status DryRunBackend::ResetMemoryClocks(int gpu) {
  if (Status s = CheckIndex(gpu); !s.ok()) return s;
  Log("dry run: would reset GPU " + std::to_string(gpu) + " memory clocks");
  return Status::Ok();
}

Status DryRunBackend::SetPowerLimitMw(int gpu, int64_t limit_mw) {
  auto limits = inner_->PowerLimits(gpu);
  if (!limits.ok()) return limits.error();
  if (limit_mw < limits->min_mw || limit_mw > limits->max_mw) {
    return Error{"cannot set GPU " + std::to_string(gpu) + " power limit to " + std::to_string(limit_mw) +
                 " mW: allowed " + std::to_string(limits->min_mw) + "-" + std::to_string(limits->max_mw) + " mW"};
  }
  Log("dry run: would set GPU " + std::to_string(gpu) + " power limit to " + std::to_string(limit_mw) + " mW");
  return Status::Ok();
}

}  // namespace wattcut
