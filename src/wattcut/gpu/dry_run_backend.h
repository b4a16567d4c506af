// Dry run: wraps any backend; readings come from it, setters only log what they would do
// ("dry run: would lock GPU 0 SM clocks to 1200-1200 MHz") and change nothing. Arguments are
// still checked against the real GPU (index, supported clocks, power-limit range), so a dry run
// finds the mistakes a real run would.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wattcut/gpu/gpu_backend.h"

namespace wattcut {

class DryRunBackend final : public GpuBackend {
 public:
  // `log` receives one line per setter call (no newline); by default they go to stderr.
  explicit DryRunBackend(std::unique_ptr<GpuBackend> inner, std::function<void(const std::string&)> log = nullptr);

  std::string name() const override { return "dry-run(" + inner_->name() + ")"; }
  Result<int> DeviceCount() override { return inner_->DeviceCount(); }
  Result<GpuInfo> Info(int gpu) override { return inner_->Info(gpu); }
  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override { return inner_->SupportedMemoryClocksMhz(gpu); }
  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override {
    return inner_->SupportedGraphicsClocksMhz(gpu, memory_clock_mhz);
  }
  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetGpuClocks(int gpu) override;
  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetMemoryClocks(int gpu) override;
  Result<PowerLimitsMw> PowerLimits(int gpu) override { return inner_->PowerLimits(gpu); }
  Result<int64_t> PowerLimitMw(int gpu) override { return inner_->PowerLimitMw(gpu); }
  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override;
  Result<int64_t> PowerUsageMw(int gpu) override { return inner_->PowerUsageMw(gpu); }
  Result<PowerFieldsMw> PowerFields(int gpu) override { return inner_->PowerFields(gpu); }
  Result<bool> PersistenceMode(int gpu) override { return inner_->PersistenceMode(gpu); }
  Result<int64_t> TotalEnergyMj(int gpu) override { return inner_->TotalEnergyMj(gpu); }
  Result<int> SmClockMhz(int gpu) override { return inner_->SmClockMhz(gpu); }

  GpuBackend& inner() { return *inner_; }

 private:
  Status CheckIndex(int gpu);
  void Log(const std::string& line);
  std::unique_ptr<GpuBackend> inner_;
  std::function<void(const std::string&)> log_;
};

}  // namespace wattcut
