// The GPU interface of wattcut: discovery, supported clocks, clock and power-limit control,
// power and energy readings. Every call names a GPU by its index (0..DeviceCount()-1) and
// returns errors as values whose message is ready for a user (for NVML, it carries NVML's own
// error string and what to do about it).
//
// Backends: NVML (nvml_backend.h, the real GPUs), simulated (simulated_backend.h, GPUs that
// follow the built-in GPU models) and dry run (dry_run_backend.h, wraps either: setters only log).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_address;  // "0000:01:00.0" (domain:bus:device.function, lowercase); "" when unknown
};

struct PowerLimitsMw {
  int64_t default_mw = 0;
  int64_t min_mw = 0;
  int64_t max_mw = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;

  // "nvml", "simulated", "dry-run(nvml)", ...
  virtual std::string name() const = 0;

  virtual Result<int> DeviceCount() = 0;
  virtual Result<GpuInfo> Info(int gpu) = 0;
  // Supported memory clocks, highest first.
  virtual Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) = 0;
  // Supported graphics (SM) clocks at one memory clock, highest first.
  virtual Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) = 0;

  virtual Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) = 0;
  virtual Status ResetGpuClocks(int gpu) = 0;
  virtual Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) = 0;
  virtual Status ResetMemoryClocks(int gpu) = 0;

  virtual Result<PowerLimitsMw> PowerLimits(int gpu) = 0;
  // The power limit set now (what SetPowerLimitMw last set, or the default).
  virtual Result<int64_t> PowerLimitMw(int gpu) = 0;
  virtual Status SetPowerLimitMw(int gpu, int64_t limit_mw) = 0;

  // The driver's power reading (NVML's nvmlDeviceGetPowerUsage: a 1-second average on recent GPUs
  // (Ampere but GA100, and later), the instant power on older ones).
  virtual Result<int64_t> PowerUsageMw(int gpu) = 0;
  // Both of NVML's power fields where the driver keeps them (nvmlDeviceGetFieldValues): the instant
  // power and the 1-second average, each absent where the GPU lacks it. kNotFound where the backend
  // or the driver has no field values at all (PowerUsageMw is then all there is).
  struct PowerFieldsMw {
    std::optional<int64_t> instant_mw;
    std::optional<int64_t> average_mw;
  };
  virtual Result<PowerFieldsMw> PowerFields(int gpu) {
    (void)gpu;
    return Error::NotFound("the " + name() + " backend has no instant or averaged power fields");
  }
  // Whether the driver keeps the GPU initialised with no client (NVML's persistence mode).
  virtual Result<bool> PersistenceMode(int gpu) {
    (void)gpu;
    return Error::NotFound("the " + name() + " backend does not read persistence mode");
  }
  // Energy used since the driver was loaded (NVML) or the GPU was created (simulated), mJ.
  virtual Result<int64_t> TotalEnergyMj(int gpu) = 0;
  virtual Result<int> SmClockMhz(int gpu) = 0;
};

// Helpers on top of the interface.

// The highest supported memory clock.
Result<int> MaxMemoryClockMhz(GpuBackend& backend, int gpu);
// Supported SM clocks at the highest memory clock, highest first (what Perseus plans over).
Result<std::vector<int>> SupportedSmClocksMhz(GpuBackend& backend, int gpu);
// Locks the memory clock to its maximum (Perseus keeps it there while it moves the SM clock).
Status LockMemoryClockToMax(GpuBackend& backend, int gpu);
// Resets the power limit to the default one.
Status ResetPowerLimit(GpuBackend& backend, int gpu);
// Fails unless 0 <= gpu < count, with "GPU <gpu> does not exist (<count> GPUs)".
Status CheckGpuIndex(int gpu, int count);
// A driver library's call as messages name it: "nvmlDeviceGetName(GPU 0)", "rsmi_dev_clk_range_set(GPU 1, 800, 1200
// MHz)".
std::string GpuCall(const char* function, int gpu, const std::string& args = "");
// A list of supported clocks as shown to a user: "1410..210 MHz (81 clocks)" (first..last), or "none".
std::string ClockRangeText(const std::vector<int>& clocks_mhz);

}  // namespace wattcut
