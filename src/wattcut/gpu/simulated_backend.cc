#include "wattcut/gpu/simulated_backend.h"

#include <algorithm>
#include <cmath>

namespace wattcut {
namespace {

// Nominal maximum memory clocks (HBM2e on the A100 SXM 80 GB, GDDR6 on the A40). Simulated GPUs
// also offer one lower memory clock, where the SM clock list is the same.
int MaxMemoryClockFor(const GpuModel& model) { return model.name == "a40" ? 7251 : 1593; }

}  // namespace

SimulatedBackend::SimulatedBackend(std::vector<const GpuModel*> models, std::shared_ptr<Clock> clock)
    : clock_(clock ? std::move(clock) : std::make_shared<SteadyClock>()) {
  const double now = clock_->NowS();
  for (const GpuModel* model : models) {
    Gpu gpu;
    gpu.model = model;
    gpu.power_limit_mw = static_cast<int64_t>(std::llround(model->tdp_w * 1000));
    gpu.since_s = now;
    gpu.power_w = model->idle_power_w;
    gpus_.push_back(gpu);
  }
}

Result<std::unique_ptr<SimulatedBackend>> SimulatedBackend::Create(const std::string& model_name, int count,
                                                                   std::shared_ptr<Clock> clock) {
  auto model = FindGpuModel(model_name);
  if (!model.ok()) return model.error();
  if (count < 1) return Error{"a simulated backend needs at least one GPU, got " + std::to_string(count)};
  return std::make_unique<SimulatedBackend>(std::vector<const GpuModel*>(static_cast<size_t>(count), *model),
                                            std::move(clock));
}

Status SimulatedBackend::Check(int gpu) const { return CheckGpuIndex(gpu, static_cast<int>(gpus_.size())); }

void SimulatedBackend::Settle(Gpu& gpu, double now_s) {
  if (now_s > gpu.since_s) {
    gpu.energy_j += gpu.power_w * (now_s - gpu.since_s);
    gpu.since_s = now_s;
  }
}

int SimulatedBackend::CurrentSmClock(const Gpu& gpu) const {
  return gpu.locked_max_mhz > 0 ? gpu.locked_max_mhz : gpu.model->max_freq_mhz;
}

Result<GpuInfo> SimulatedBackend::Info(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  const GpuModel& m = *gpus_[static_cast<size_t>(gpu)].model;
  return GpuInfo{.index = gpu,
                 .name = "Simulated " + m.name + " (wattcut GPU model)",
                 .uuid = "GPU-SIM-" + m.name + "-" + std::to_string(gpu),
                 .pci_address = ""};  // no bus: zeusd's /discover says null
}

Result<std::vector<int>> SimulatedBackend::SupportedMemoryClocksMhz(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  const int max = MaxMemoryClockFor(*gpus_[static_cast<size_t>(gpu)].model);
  return std::vector<int>{max, max / 2};
}

Result<std::vector<int>> SimulatedBackend::SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) {
  auto memory = SupportedMemoryClocksMhz(gpu);
  if (!memory.ok()) return memory.error();
  if (std::find(memory->begin(), memory->end(), memory_clock_mhz) == memory->end()) {
    return Error{"GPU " + std::to_string(gpu) + " has no memory clock of " + std::to_string(memory_clock_mhz) + " MHz"};
  }
  return gpus_[static_cast<size_t>(gpu)].model->SupportedFreqsMhz();
}

Status SimulatedBackend::LockGpuClocks(int gpu, int min_mhz, int max_mhz) {
  if (Status s = Check(gpu); !s.ok()) return s;
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  if (min_mhz < g.model->min_freq_mhz || max_mhz > g.model->max_freq_mhz || min_mhz > max_mhz) {
    return Error{"cannot lock GPU " + std::to_string(gpu) + " SM clocks to " + std::to_string(min_mhz) + "-" +
                 std::to_string(max_mhz) + " MHz: supported " + std::to_string(g.model->min_freq_mhz) + "-" +
                 std::to_string(g.model->max_freq_mhz) + " MHz"};
  }
  Settle(g, clock_->NowS());
  g.locked_min_mhz = min_mhz;
  g.locked_max_mhz = max_mhz;
  return Status::Ok();
}

Status SimulatedBackend::ResetGpuClocks(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s;
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  Settle(g, clock_->NowS());
  g.locked_min_mhz = g.locked_max_mhz = 0;
  return Status::Ok();
}

Status SimulatedBackend::LockMemoryClocks(int gpu, int min_mhz, int max_mhz) {
  auto memory = SupportedMemoryClocksMhz(gpu);
  if (!memory.ok()) return memory.error();
  if (min_mhz != max_mhz || std::find(memory->begin(), memory->end(), max_mhz) == memory->end()) {
    return Error{"cannot lock GPU " + std::to_string(gpu) + " memory clocks to " + std::to_string(min_mhz) + "-" +
                 std::to_string(max_mhz) + " MHz: the simulated GPU locks to one supported memory clock"};
  }
  std::lock_guard lock(mutex_);
  gpus_[static_cast<size_t>(gpu)].memory_locked_mhz = max_mhz;
  return Status::Ok();
}

Status SimulatedBackend::ResetMemoryClocks(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s;
  std::lock_guard lock(mutex_);
  gpus_[static_cast<size_t>(gpu)].memory_locked_mhz = 0;
  return Status::Ok();
}

Result<PowerLimitsMw> SimulatedBackend::PowerLimits(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  const int64_t tdp_mw = static_cast<int64_t>(std::llround(gpus_[static_cast<size_t>(gpu)].model->tdp_w * 1000));
  return PowerLimitsMw{.default_mw = tdp_mw, .min_mw = tdp_mw / 2, .max_mw = tdp_mw};
}

Result<int64_t> SimulatedBackend::PowerLimitMw(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  std::lock_guard lock(mutex_);
  return gpus_[static_cast<size_t>(gpu)].power_limit_mw;
}

Status SimulatedBackend::SetPowerLimitMw(int gpu, int64_t limit_mw) {
  auto limits = PowerLimits(gpu);
  if (!limits.ok()) return limits.error();
  if (limit_mw < limits->min_mw || limit_mw > limits->max_mw) {
    return Error{"cannot set GPU " + std::to_string(gpu) + " power limit to " + std::to_string(limit_mw) +
                 " mW: allowed " + std::to_string(limits->min_mw) + "-" + std::to_string(limits->max_mw) + " mW"};
  }
  std::lock_guard lock(mutex_);
  gpus_[static_cast<size_t>(gpu)].power_limit_mw = limit_mw;
  return Status::Ok();
}

Result<int64_t> SimulatedBackend::PowerUsageMw(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(std::llround(gpus_[static_cast<size_t>(gpu)].power_w * 1000));
}

Result<GpuBackend::PowerFieldsMw> SimulatedBackend::PowerFields(int gpu) {
  auto power = PowerUsageMw(gpu);
  if (!power.ok()) return power.error();
  return PowerFieldsMw{*power, *power};
}

Result<bool> SimulatedBackend::PersistenceMode(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  return true;
}

Result<int64_t> SimulatedBackend::TotalEnergyMj(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  Settle(g, clock_->NowS());
  return static_cast<int64_t>(std::floor(g.energy_j * 1000));
}

Result<int> SimulatedBackend::SmClockMhz(int gpu) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  std::lock_guard lock(mutex_);
  return CurrentSmClock(gpus_[static_cast<size_t>(gpu)]);
}

bool SimulatedBackend::gpu_clocks_locked(int gpu) const {
  std::lock_guard lock(mutex_);
  return gpus_.at(static_cast<size_t>(gpu)).locked_max_mhz > 0;
}

bool SimulatedBackend::memory_clocks_locked(int gpu) const {
  std::lock_guard lock(mutex_);
  return gpus_.at(static_cast<size_t>(gpu)).memory_locked_mhz > 0;
}

Result<double> SimulatedBackend::Run(int gpu, InstructionKind kind, const WorkloadPoint& at_fmax) {
  if (Status s = Check(gpu); !s.ok()) return s.error();
  double duration_s = 0;
  double start_s = 0;
  {
    std::lock_guard lock(mutex_);
    Gpu& g = gpus_[static_cast<size_t>(gpu)];
    const int f = CurrentSmClock(g);
    duration_s = at_fmax.time_s * g.model->RelativeTime(kind, f);
    start_s = clock_->NowS();
    Settle(g, start_s);
    g.power_w = at_fmax.power_w * g.model->RelativePower(kind, f);
  }
  clock_->SleepForS(duration_s);
  std::lock_guard lock(mutex_);
  Gpu& g = gpus_[static_cast<size_t>(gpu)];
  const double end_s = clock_->NowS();
  Settle(g, end_s);
  g.power_w = g.model->idle_power_w;
  return end_s - start_s;
}

}  // namespace wattcut
