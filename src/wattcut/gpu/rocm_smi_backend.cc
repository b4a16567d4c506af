#include "wattcut/gpu/rocm_smi_backend.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <utility>

#include "wattcut/base/mutex.h"
#include "wattcut/gpu/clock_kind.h"

namespace wattcut {

std::vector<int> SclkGridMhz(const std::vector<int>& levels_mhz) {
  if (levels_mhz.empty()) return {};
  const auto [low, high] = std::minmax_element(levels_mhz.begin(), levels_mhz.end());
  std::vector<int> grid;
  for (int mhz = *high; mhz > *low; mhz -= kSclkStepMhz) grid.push_back(mhz);
  grid.push_back(*low);
  return grid;
}

uint64_t EnergyUnwrap::Add(uint64_t raw) {
  constexpr uint64_t k32 = uint64_t{1} << 32;
  if (seen_ && raw < last_raw_) offset_ += last_raw_ < k32 ? k32 : last_raw_;
  seen_ = true;
  last_raw_ = raw;
  return offset_ + raw;
}

namespace {

using rocm_smi::RocmSmiLibrary;

// One clock's DPM levels as ROCm SMI reads them, in MHz, in the driver's order, with the index
// of the one running now (-1: none, or the GPU sleeps). A deep-sleep clock (ROCm 6 lists it first,
// the driver's "S:" line) is no level a lock may use: it is kept apart, as what the GPU runs while
// it sleeps.
struct ClockLevels {
  std::vector<int> mhz;
  int current = -1;
  std::optional<int> sleeping_mhz;
};

class RocmSmiBackend final : public GpuBackend {
 public:
  RocmSmiBackend(std::unique_ptr<RocmSmiLibrary> lib, int count)
      : lib_(std::move(lib)), count_(count), gpus_(static_cast<size_t>(count)) {}

  std::string name() const override { return "rocm-smi"; }
  Result<int> DeviceCount() override { return count_; }

  Result<GpuInfo> Info(int gpu) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    GpuInfo info;
    info.index = gpu;
    const auto dv = static_cast<uint32_t>(gpu);
    char name[256] = {};
    if (Status s = Call(F().rsmi_dev_name_get, "rsmi_dev_name_get", gpu, "", dv, name, sizeof name); !s.ok()) {
      return s.error();
    }
    info.name = name;
    // Without the PCI ID database (Debian's pci.ids) ROCm SMI names a GPU by its vendor's number:
    // the device's number says more.
    uint16_t device_id = 0;
    if ((info.name.empty() || info.name.rfind("0x", 0) == 0) && F().rsmi_dev_id_get != nullptr &&
        F().rsmi_dev_id_get(dv, &device_id) == rocm_smi::kSuccess) {
      char text[48];
      std::snprintf(text, sizeof text, "AMD GPU (device 0x%04x)", device_id);
      info.name = text;
    }
    uint64_t unique_id = 0;
    if (F().rsmi_dev_unique_id_get != nullptr && F().rsmi_dev_unique_id_get(dv, &unique_id) == rocm_smi::kSuccess) {
      char text[40];
      std::snprintf(text, sizeof text, "AMD-GPU-%016llx", static_cast<unsigned long long>(unique_id));
      info.uuid = text;
    } else {
      info.uuid = "AMD-GPU-index-" + std::to_string(gpu);
    }
    // rsmi_dev_pci_id_get: domain << 32 | bus << 8 | device << 3 | function.
    uint64_t bdf = 0;
    if (F().rsmi_dev_pci_id_get != nullptr && F().rsmi_dev_pci_id_get(dv, &bdf) == rocm_smi::kSuccess) {
      char text[32];
      std::snprintf(text, sizeof text, "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(bdf >> 32),
                    static_cast<unsigned long long>((bdf >> 8) & 0xff),
                    static_cast<unsigned long long>((bdf >> 3) & 0x1f), static_cast<unsigned long long>(bdf & 0x7));
      info.pci_address = text;
    }
    return info;
  }

  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override {
    auto levels = Levels(gpu, ClockKind::kMemory);
    if (!levels.ok()) return levels.error();
    std::vector<int> out = levels->mhz;
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
  }

  // The system clock's range does not depend on the memory clock on AMD.
  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override {
    (void)memory_clock_mhz;
    auto range = SystemClockRange(gpu);
    if (!range.ok()) return range.error();
    return SclkGridMhz({range->first, range->second});
  }

  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override {
    if (Status s = CheckRange(ClockKind::kSm, gpu, min_mhz, max_mhz); !s.ok()) return s;
    MutexLock lock(mu_);
    if (Status s = ApplySmRange(gpu, min_mhz, max_mhz); !s.ok()) return s;
    State(gpu).sm_range = std::make_pair(min_mhz, max_mhz);
    return Status::Ok();
  }

  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override {
    if (Status s = CheckRange(ClockKind::kMemory, gpu, min_mhz, max_mhz); !s.ok()) return s;
    auto levels = Levels(gpu, ClockKind::kMemory);
    if (!levels.ok()) return levels.error();
    uint64_t mask = 0;
    for (size_t i = 0; i < levels->mhz.size(); ++i) {
      if (levels->mhz[i] >= min_mhz && levels->mhz[i] <= max_mhz) mask |= uint64_t{1} << i;
    }
    if (mask == 0) {
      return Error::InvalidArgument("cannot lock GPU " + std::to_string(gpu) + " memory clocks to " +
                                    std::to_string(min_mhz) + "-" + std::to_string(max_mhz) +
                                    " MHz: no memory DPM level of the GPU is in that range (" +
                                    ClockRangeText(levels->mhz) + ")");
    }
    MutexLock lock(mu_);
    if (Status s = ApplyMemoryMask(gpu, mask); !s.ok()) return s;
    State(gpu).memory_mask = mask;
    return Status::Ok();
  }

  Status ResetGpuClocks(int gpu) override { return ResetClock(ClockKind::kSm, gpu); }
  Status ResetMemoryClocks(int gpu) override { return ResetClock(ClockKind::kMemory, gpu); }

  Result<PowerLimitsMw> PowerLimits(int gpu) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    const auto dv = static_cast<uint32_t>(gpu);
    uint64_t default_uw = 0, max_uw = 0, min_uw = 0;
    if (Status s = Call(F().rsmi_dev_power_cap_default_get, "rsmi_dev_power_cap_default_get", gpu, "", dv, &default_uw);
        !s.ok()) {
      return s.error();
    }
    if (Status s =
            Call(F().rsmi_dev_power_cap_range_get, "rsmi_dev_power_cap_range_get", gpu, "", dv, 0u, &max_uw, &min_uw);
        !s.ok()) {
      return s.error();
    }
    return PowerLimitsMw{.default_mw = static_cast<int64_t>(default_uw / 1000),
                         .min_mw = static_cast<int64_t>(min_uw / 1000),
                         .max_mw = static_cast<int64_t>(max_uw / 1000)};
  }

  Result<int64_t> PowerLimitMw(int gpu) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    uint64_t cap_uw = 0;
    if (Status s = Call(F().rsmi_dev_power_cap_get, "rsmi_dev_power_cap_get", gpu, "", static_cast<uint32_t>(gpu), 0u,
                        &cap_uw);
        !s.ok()) {
      return s.error();
    }
    return static_cast<int64_t>(cap_uw / 1000);
  }

  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s;
    if (limit_mw <= 0) {
      return Error::InvalidArgument("cannot set GPU " + std::to_string(gpu) + "'s power cap to " +
                                    std::to_string(limit_mw) + " mW: it must be positive");
    }
    const auto cap_uw = static_cast<uint64_t>(limit_mw) * 1000;
    return Call(F().rsmi_dev_power_cap_set, "rsmi_dev_power_cap_set", gpu, std::to_string(cap_uw) + " uW",
                static_cast<uint32_t>(gpu), 0u, cap_uw);
  }

  Result<int64_t> PowerUsageMw(int gpu) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    uint64_t power_uw = 0;
    if (Status s = Call(F().rsmi_dev_power_ave_get, "rsmi_dev_power_ave_get", gpu, "", static_cast<uint32_t>(gpu), 0u,
                        &power_uw);
        !s.ok()) {
      return s.error();
    }
    return static_cast<int64_t>(power_uw / 1000);
  }

  Result<PowerFieldsMw> PowerFields(int gpu) override {
    auto average = PowerUsageMw(gpu);
    if (!average.ok()) return average.error();
    return PowerFieldsMw{.instant_mw = std::nullopt, .average_mw = *average};
  }

  Result<int64_t> TotalEnergyMj(int gpu) override {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    uint64_t counts = 0, timestamp = 0;
    float resolution_uj = 0;
    if (Status s = Call(F().rsmi_dev_energy_count_get, "rsmi_dev_energy_count_get", gpu, "", static_cast<uint32_t>(gpu),
                        &counts, &resolution_uj, &timestamp);
        !s.ok()) {
      return s.error();
    }
    if (!(resolution_uj > 0.0F)) {
      return Error::DeviceError(GpuCall("rsmi_dev_energy_count_get", gpu) + ": the counter's resolution is " +
                                std::to_string(resolution_uj) + " uJ; a counter without one cannot be read");
    }
    MutexLock lock(mu_);
    const uint64_t total = State(gpu).energy.Add(counts);
    return static_cast<int64_t>(static_cast<double>(total) * static_cast<double>(resolution_uj) / 1000.0);
  }

  Result<int> SmClockMhz(int gpu) override {
    auto levels = Levels(gpu, ClockKind::kSm);
    if (!levels.ok()) return levels.error();
    if (levels->current < 0 && levels->sleeping_mhz) return *levels->sleeping_mhz;
    if (levels->current < 0 || levels->current >= static_cast<int>(levels->mhz.size())) {
      return Error::DeviceError(GpuCall("rsmi_dev_gpu_clk_freq_get", gpu, "RSMI_CLK_TYPE_SYS") +
                                ": the driver marks no system clock level as current");
    }
    return levels->mhz[static_cast<size_t>(levels->current)];
  }

 private:
  // What this backend set on one GPU, to put back the other clock after a reset.
  struct GpuState {
    // The system clock's lowest and highest DPM levels, read once (SystemClockRange).
    std::optional<std::pair<int, int>> system_clock_range_mhz;
    std::optional<std::pair<int, int>> sm_range;
    std::optional<uint64_t> memory_mask;
    EnergyUnwrap energy;
  };

  const rocm_smi::Functions& F() const { return lib_->fn(); }
  GpuState& State(int gpu) REQUIRES(mu_) { return gpus_[static_cast<size_t>(gpu)]; }

  Result<ClockLevels> Levels(int gpu, ClockKind kind) {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    if (Status s =
            lib_->Require(reinterpret_cast<const void*>(F().rsmi_dev_gpu_clk_freq_get), "rsmi_dev_gpu_clk_freq_get");
        !s.ok()) {
      return s.error();
    }
    const int type = kind == ClockKind::kSm ? rocm_smi::kClockSystem : rocm_smi::kClockMemory;
    const std::string shown = kind == ClockKind::kSm ? "RSMI_CLK_TYPE_SYS" : "RSMI_CLK_TYPE_MEM";
    uint32_t num = 0, current = 0;
    const uint64_t* hz = nullptr;
    bool deep_sleep_first = false;
    rocm_smi::Frequencies5 v5{};
    rocm_smi::Frequencies6 v6{};
    uint32_t rc = 0;
    if (lib_->frequencies_have_deep_sleep()) {
      rc = F().rsmi_dev_gpu_clk_freq_get(static_cast<uint32_t>(gpu), type, &v6);
      num = v6.num_supported, current = v6.current, hz = v6.frequency_hz, deep_sleep_first = v6.has_deep_sleep;
    } else {
      rc = F().rsmi_dev_gpu_clk_freq_get(static_cast<uint32_t>(gpu), type, &v5);
      num = v5.num_supported, current = v5.current, hz = v5.frequency_hz;
    }
    if (rc != rocm_smi::kSuccess) return lib_->MakeError(GpuCall("rsmi_dev_gpu_clk_freq_get", gpu, shown), rc);
    if (num == 0 || num > rocm_smi::kMaxFrequencies) {
      return Error::DeviceError(GpuCall("rsmi_dev_gpu_clk_freq_get", gpu, shown) + ": " + std::to_string(num) +
                                " levels, expected 1 to " + std::to_string(rocm_smi::kMaxFrequencies) +
                                " (is ROCm SMI " + lib_->version_text() + " laid out as wattcut reads it?)");
    }
    ClockLevels out;
    const uint32_t first = deep_sleep_first && num > 1 ? 1 : 0;
    if (first == 1) out.sleeping_mhz = static_cast<int>(hz[0] / 1'000'000);
    for (uint32_t i = first; i < num; ++i) out.mhz.push_back(static_cast<int>(hz[i] / 1'000'000));
    out.current = current >= first && current < num ? static_cast<int>(current - first) : -1;
    return out;
  }

  Status CheckRange(ClockKind kind, int gpu, int min_mhz, int max_mhz) {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s;
    if (min_mhz <= 0 || max_mhz < min_mhz) {
      return Error{"cannot lock GPU " + std::to_string(gpu) + " " + std::string(ClockKindName(kind)) + " clocks to " +
                   std::to_string(min_mhz) + "-" + std::to_string(max_mhz) + " MHz: bad range"};
    }
    if (kind == ClockKind::kMemory) return Status::Ok();
    auto range = SystemClockRange(gpu);
    if (!range.ok()) return range.error();
    const auto [low, high] = *range;
    if (min_mhz < low || max_mhz > high) {
      return Error::InvalidArgument("cannot lock GPU " + std::to_string(gpu) + " SM clocks to " +
                                    std::to_string(min_mhz) + "-" + std::to_string(max_mhz) +
                                    " MHz: the GPU's system clock runs from " + std::to_string(low) + " to " +
                                    std::to_string(high) + " MHz");
    }
    return Status::Ok();
  }

  // The system clock's lowest and highest DPM levels, read once and kept: a lock on the training
  // path then reads no driver file, and neither the range nor the grid follows this backend's own
  // locks where a driver lists its soft limits as those levels (docs/gpu.md).
  Result<std::pair<int, int>> SystemClockRange(int gpu) {
    {
      MutexLock lock(mu_);
      if (State(gpu).system_clock_range_mhz) return *State(gpu).system_clock_range_mhz;
    }
    auto levels = Levels(gpu, ClockKind::kSm);
    if (!levels.ok()) return levels.error();
    const auto [low, high] = std::minmax_element(levels->mhz.begin(), levels->mhz.end());
    MutexLock lock(mu_);
    State(gpu).system_clock_range_mhz = std::make_pair(*low, *high);
    return *State(gpu).system_clock_range_mhz;
  }

  Status ApplySmRange(int gpu, int min_mhz, int max_mhz) REQUIRES(mu_) {
    return Call(F().rsmi_dev_clk_range_set, "rsmi_dev_clk_range_set", gpu,
                std::to_string(min_mhz) + ", " + std::to_string(max_mhz) + " MHz, RSMI_CLK_TYPE_SYS",
                static_cast<uint32_t>(gpu), static_cast<uint64_t>(min_mhz), static_cast<uint64_t>(max_mhz),
                static_cast<int>(rocm_smi::kClockSystem));
  }

  Status ApplyMemoryMask(int gpu, uint64_t mask) REQUIRES(mu_) {
    char shown[48];
    std::snprintf(shown, sizeof shown, "RSMI_CLK_TYPE_MEM, levels 0x%llx", static_cast<unsigned long long>(mask));
    return Call(F().rsmi_dev_gpu_clk_freq_set, "rsmi_dev_gpu_clk_freq_set", gpu, shown, static_cast<uint32_t>(gpu),
                static_cast<int>(rocm_smi::kClockMemory), mask);
  }

  // The driver's one performance level back to "auto", then the other clock's lock, if held.
  Status ResetClock(ClockKind kind, int gpu) {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s;
    MutexLock lock(mu_);
    GpuState& state = State(gpu);
    if (Status s = Call(F().rsmi_dev_perf_level_set_v1, "rsmi_dev_perf_level_set_v1", gpu, "RSMI_DEV_PERF_LEVEL_AUTO",
                        static_cast<uint32_t>(gpu), static_cast<int>(rocm_smi::kPerfAuto));
        !s.ok()) {
      return s;
    }
    if (kind == ClockKind::kSm) {
      state.sm_range.reset();
      if (state.memory_mask) return ApplyMemoryMask(gpu, *state.memory_mask);
    } else {
      state.memory_mask.reset();
      if (state.sm_range) return ApplySmRange(gpu, state.sm_range->first, state.sm_range->second);
    }
    return Status::Ok();
  }

  // Calls `fn(args...)` after checking the symbol exists; turns a failure into an Error.
  template <typename Fn, typename... Args>
  Status Call(Fn fn, const char* fn_name, int gpu, const std::string& shown_args, Args... args) {
    if (Status s = lib_->Require(reinterpret_cast<const void*>(fn), fn_name); !s.ok()) return s;
    const uint32_t rc = fn(args...);
    if (rc != rocm_smi::kSuccess) return lib_->MakeError(GpuCall(fn_name, gpu, shown_args), rc);
    return Status::Ok();
  }

  std::unique_ptr<RocmSmiLibrary> lib_;
  const int count_;
  Mutex mu_;
  std::vector<GpuState> gpus_ GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> OpenRocmSmiBackend(const std::string& library_name) {
  auto lib = rocm_smi::RocmSmiLibrary::Open(library_name);
  if (!lib.ok()) return lib.error();
  const rocm_smi::Functions& f = (*lib)->fn();
  if (Status s = (*lib)->Require(reinterpret_cast<const void*>(f.rsmi_num_monitor_devices), "rsmi_num_monitor_devices");
      !s.ok()) {
    return s.error();
  }
  uint32_t count = 0;
  if (uint32_t rc = f.rsmi_num_monitor_devices(&count); rc != rocm_smi::kSuccess) {
    return (*lib)->MakeError("rsmi_num_monitor_devices()", rc);
  }
  if (count == 0) {
    return Error{"ROCm SMI (" + library_name +
                 ") sees no AMD GPU: check rocm-smi, and in a container that /dev/kfd and /dev/dri are "
                 "passed through"};
  }
  return std::unique_ptr<GpuBackend>(new RocmSmiBackend(std::move(lib).value(), static_cast<int>(count)));
}

}  // namespace wattcut
