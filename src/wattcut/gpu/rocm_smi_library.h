// ROCm SMI loaded at run time: dlopen("librocm_smi64.so.1") and our own declarations of the few
// functions wattcut uses, so no ROCm header or library is needed to build, and one `wattcut`
// binary serves NVIDIA and AMD nodes. Signatures and return codes follow rocm_smi.h (Debian 12's
// librocm-smi-dev 5.2.3; ROCm's own under /opt/rocm/include/rocm_smi).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::rocm_smi {

// rsmi_status_t values.
enum RsmiStatus : uint32_t {
  kSuccess = 0,
  kInvalidArgs = 1,
  kNotSupported = 2,
  kFileError = 3,
  kPermission = 4,
  kOutOfResources = 5,
  kInternalException = 6,
  kInputOutOfBounds = 7,
  kInitError = 8,
  kNotYetImplemented = 9,
  kNotFound = 10,
  kInsufficientSize = 11,
  kInterrupt = 12,
  kUnexpectedSize = 13,
  kNoData = 14,
  kUnexpectedData = 15,
  kBusy = 16,
  kRefcountOverflow = 17,
  kUnknownError = 0xFFFFFFFF,
};

// "RSMI_STATUS_PERMISSION", ... ("rsmi status <code>" for others).
std::string StatusName(uint32_t code);

// rsmi_clk_type_t: the system (graphics, "SCLK") and memory ("MCLK") clocks.
enum ClockType : int { kClockSystem = 0, kClockMemory = 4 };

// rsmi_dev_perf_level_t values wattcut sets: the driver's own choice, and the manual level under
// which a clock range or a level mask holds.
enum PerfLevel : int { kPerfAuto = 0, kPerfManual = 3 };

inline constexpr int kMaxFrequencies = 32;  // RSMI_MAX_NUM_FREQUENCIES

// rsmi_frequencies_t as ROCm SMI 5.x lays it out (Debian 12's 5.2.3)...
struct Frequencies5 {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency_hz[kMaxFrequencies];
};
// ...and as 6.x does: `bool has_deep_sleep` was put first (ROCm 6.0).
struct Frequencies6 {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency_hz[kMaxFrequencies];
};
static_assert(sizeof(Frequencies5) == 264 && sizeof(Frequencies6) == 272, "rsmi_frequencies_t layouts");

// rsmi_version_t.
struct Version {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
  const char* build;
};

// The function table. Members are null for symbols the loaded library lacks; RocmSmiLibrary::
// Require reports them.
struct Functions {
  uint32_t (*rsmi_init)(uint64_t) = nullptr;
  uint32_t (*rsmi_shut_down)() = nullptr;
  uint32_t (*rsmi_status_string)(uint32_t, const char**) = nullptr;
  uint32_t (*rsmi_version_get)(Version*) = nullptr;
  uint32_t (*rsmi_num_monitor_devices)(uint32_t*) = nullptr;
  uint32_t (*rsmi_dev_name_get)(uint32_t, char*, size_t) = nullptr;
  uint32_t (*rsmi_dev_id_get)(uint32_t, uint16_t*) = nullptr;
  uint32_t (*rsmi_dev_unique_id_get)(uint32_t, uint64_t*) = nullptr;
  uint32_t (*rsmi_dev_pci_id_get)(uint32_t, uint64_t*) = nullptr;
  uint32_t (*rsmi_dev_gpu_clk_freq_get)(uint32_t, int, void*) = nullptr;  // rsmi_frequencies_t*
  uint32_t (*rsmi_dev_gpu_clk_freq_set)(uint32_t, int, uint64_t) = nullptr;
  uint32_t (*rsmi_dev_clk_range_set)(uint32_t, uint64_t, uint64_t, int) = nullptr;
  uint32_t (*rsmi_dev_perf_level_set_v1)(uint32_t, int) = nullptr;
  uint32_t (*rsmi_dev_perf_level_get)(uint32_t, int*) = nullptr;
  uint32_t (*rsmi_dev_power_ave_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  uint32_t (*rsmi_dev_power_cap_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  uint32_t (*rsmi_dev_power_cap_default_get)(uint32_t, uint64_t*) = nullptr;
  uint32_t (*rsmi_dev_power_cap_range_get)(uint32_t, uint32_t, uint64_t*, uint64_t*) = nullptr;  // max, min
  uint32_t (*rsmi_dev_power_cap_set)(uint32_t, uint32_t, uint64_t) = nullptr;
  uint32_t (*rsmi_dev_energy_count_get)(uint32_t, uint64_t*, float*, uint64_t*) = nullptr;
};

inline constexpr const char* kDefaultLibraryName = "librocm_smi64.so.1";

// An opened and initialised ROCm SMI (rsmi_init done; rsmi_shut_down and dlclose on destruction).
class RocmSmiLibrary {
 public:
  // dlopen(library_name) (a bare name is found through the loader search: LD_LIBRARY_PATH,
  // ld.so.cache; ROCm's own is /opt/rocm/lib/librocm_smi64.so.1), resolve the symbols,
  // rsmi_init(0). Fails with what to check when the library is missing or does not initialise
  // (no amdgpu driver, no GPU).
  static Result<std::unique_ptr<RocmSmiLibrary>> Open(const std::string& library_name = kDefaultLibraryName);
  ~RocmSmiLibrary();
  RocmSmiLibrary(const RocmSmiLibrary&) = delete;
  RocmSmiLibrary& operator=(const RocmSmiLibrary&) = delete;

  const Functions& fn() const { return fn_; }
  const std::string& library_name() const { return library_name_; }
  // The library's version ("5.2.3"), or "unknown" where it has no rsmi_version_get.
  std::string version_text() const;
  // Whether rsmi_frequencies_t starts with has_deep_sleep (a library of major version 6 or later).
  bool frequencies_have_deep_sleep() const { return version_.major >= 6; }

  // Fails when the named function was not found in the library.
  ::wattcut::Status Require(const void* function, const char* function_name) const;
  // "<call>: <rsmi_status_string> (<RSMI_STATUS_X>)" plus advice for PERMISSION, NOT_SUPPORTED
  // and the file errors. `call` says what was attempted, e.g. "rsmi_dev_clk_range_set(GPU 0, 800, 1200 MHz)".
  Error MakeError(const std::string& call, uint32_t code) const;

 private:
  RocmSmiLibrary() = default;
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string library_name_;
  Version version_{0, 0, 0, nullptr};
  Functions fn_;
};

}  // namespace wattcut::rocm_smi
