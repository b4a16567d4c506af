// Simulated GPUs: each follows a built-in GPU model (profile/gpu_model.h). A computation run
// with Run() takes the model's time at the current SM clock and draws the model's power; the
// rest of the time the GPU draws its idle power. The energy counter integrates that power over
// the backend's clock (real time by default, or a ManualClock for deterministic tests).
// Used by tests, the emulator and demos.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {

class SimulatedBackend final : public GpuBackend {
 public:
  // One GPU per model pointer (models must outlive the backend; the built-in ones do).
  SimulatedBackend(std::vector<const GpuModel*> models, std::shared_ptr<Clock> clock);
  // `count` GPUs of the built-in model `model_name` on the real clock.
  static Result<std::unique_ptr<SimulatedBackend>> Create(const std::string& model_name, int count,
                                                          std::shared_ptr<Clock> clock = nullptr);

  std::string name() const override { return "simulated"; }
  Result<int> DeviceCount() override { return static_cast<int>(gpus_.size()); }
  Result<GpuInfo> Info(int gpu) override;
  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override;
  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override;
  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetGpuClocks(int gpu) override;
  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override;
  Status ResetMemoryClocks(int gpu) override;
  Result<PowerLimitsMw> PowerLimits(int gpu) override;
  Result<int64_t> PowerLimitMw(int gpu) override;
  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override;
  Result<int64_t> PowerUsageMw(int gpu) override;
  // The model's power is steady at each clock: the instant and the averaged field are both it.
  Result<PowerFieldsMw> PowerFields(int gpu) override;
  Result<bool> PersistenceMode(int gpu) override;  // always on
  Result<int64_t> TotalEnergyMj(int gpu) override;
  Result<int> SmClockMhz(int gpu) override;

  // Runs one computation of `kind` whose time and power at the model's fmax are `at_fmax`: it
  // lasts at_fmax.time_s * RelativeTime(kind, f) at the current SM clock f (the clock sleeps or
  // advances that long) and draws at_fmax.power_w * RelativePower(kind, f). Returns the time it took.
  Result<double> Run(int gpu, InstructionKind kind, const WorkloadPoint& at_fmax);

  const GpuModel& model(int gpu) const { return *gpus_.at(static_cast<size_t>(gpu)).model; }
  Clock& clock() { return *clock_; }
  // Whether SM / memory clocks are locked now (what a reset must undo).
  bool gpu_clocks_locked(int gpu) const;
  bool memory_clocks_locked(int gpu) const;

 private:
  struct Gpu {
    const GpuModel* model = nullptr;
    int locked_min_mhz = 0;  // 0: not locked
    int locked_max_mhz = 0;
    int memory_locked_mhz = 0;
    int64_t power_limit_mw = 0;
    double energy_j = 0;  // up to since_s
    double since_s = 0;
    double power_w = 0;  // drawn since since_s
  };
  Status Check(int gpu) const;
  void Settle(Gpu& gpu, double now_s);
  int CurrentSmClock(const Gpu& gpu) const;

  std::shared_ptr<Clock> clock_;
  mutable std::mutex mutex_;
  std::vector<Gpu> gpus_;
};

}  // namespace wattcut
