// The ROCm SMI backend: AMD Instinct GPUs through librocm_smi64 (see rocm_smi_library.h).
//
// What each GpuBackend call does on AMD (docs/gpu.md has the table beside NVIDIA's):
// * Supported SM clocks: the system clock's range, from its lowest DPM level (pp_dpm_sclk) to its
//   highest, every kSclkStepMhz from the top, and the lowest. The driver sets any MHz in that
//   range (a "soft" minimum and maximum), so the grid is wattcut's choice, as fine as NVIDIA's
//   15 MHz. A level between the two is not kept: an Instinct GPU's fine-grained DPM lists the clock
//   it runs now there. Supported memory clocks: the memory clock's DPM levels (pp_dpm_mclk).
// * Lock SM clocks [min, max]: rsmi_dev_clk_range_set (the manual performance level, and the
//   range written to pp_od_clk_voltage). A row's ceiling composed with a lock is such a range.
// * Lock memory clocks [min, max]: the memory DPM levels within it (rsmi_dev_gpu_clk_freq_set).
// * Reset: the driver has one performance level for both clocks, so a reset returns it to
//   "auto" and puts back the other clock's lock if this backend holds one; a reset of both is
//   the driver's own "auto".
// * Power limit: the hwmon power cap (rsmi_dev_power_cap_*), in microwatts there.
// * Power: rsmi_dev_power_ave_get, the driver's averaged socket power (there is no instant field).
// * Energy: rsmi_dev_energy_count_get, the firmware's accumulator (gpu_metrics) times its
//   resolution (15.3 uJ on the GPUs ROCm SMI knows), unwrapped when it goes back (see
//   EnergyUnwrap).
// * Persistence mode: AMD's driver has none; kNotFound as for any backend without it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/rocm_smi_library.h"

namespace wattcut {

inline constexpr int kSclkStepMhz = 15;

// The supported SM clocks offered for a system clock whose DPM levels are `levels_mhz`: every
// kSclkStepMhz from the highest level down, and the lowest level, highest first.
std::vector<int> SclkGridMhz(const std::vector<int>& levels_mhz);

// An energy counter that may go back: a 32-bit firmware accumulator wraps at 2^32 counts, and a
// driver reload starts it again at 0. Total() counts on across both: a value below the last one
// adds 2^32 when the last was a 32-bit value (a wrap), else starts a new base (a reset).
class EnergyUnwrap {
 public:
  // The total in counts after reading `raw`.
  uint64_t Add(uint64_t raw);

 private:
  bool seen_ = false;
  uint64_t last_raw_ = 0;
  uint64_t offset_ = 0;
};

// Loads ROCm SMI from `library_name` and checks that it sees at least one GPU.
Result<std::unique_ptr<GpuBackend>> OpenRocmSmiBackend(const std::string& library_name = rocm_smi::kDefaultLibraryName);

}  // namespace wattcut
