// A fake librocm_smi64.so.1 for tests: the same C ABI as ROCm SMI for the functions wattcut uses
// (rocm_smi_library.h), over simulated GPUs whose clocks move their power and energy
// (fake_nvml/fake_gpu_model.h), in a state file shared between processes. It is the fake AMD node
// of the tests that need GPUs that run: the agent, a rank, the example's training. What the real
// library does against a driver's files is tested with Debian's library itself
// (rocm_smi_backend_test.cc, fake_amdgpu_sysfs.h).
//
// Its state file is $WATTCUT_FAKE_ROCM_SMI_STATE (the fake NVML's keys where they mean the same),
// with these defaults, an MI300X's public figures:
//   gpu_count [2]  name [AMD Instinct MI300X (fake)]  device_id [29857 = 0x74a1]
//   max_mhz [2100]  min_mhz [500]                    the system clock's DPM range
//   memory_clocks [1300,900]                         memory DPM levels, highest first
//   idle_power_mw [140000]  max_power_mw [750000]    the power model
//   default_limit_mw [750000]  min_limit_mw [200000]  max_limit_mw [750000]
//   version [5.2.3]                                  6 or later lays rsmi_frequencies_t out as ROCm 6
//   deep_sleep_mhz [0]                               with version 6: a deep-sleep clock listed first
//   energy_counter_bits [64]                         32: the accumulator wraps as older firmware's
//   gpu<i>.locked_min / locked_max  gpu<i>.mem_mask  gpu<i>.perf [auto|manual]
//   gpu<i>.power_limit_mw  gpu<i>.energy_mj ...       as the fake NVML's
//   fail.<function>=<rsmi_status_t>  gpu<i>.fail.<function>=<rsmi_status_t>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_nvml/fake_gpu_model.h"

namespace {

using wattcut::fake_gpu::Double;
using wattcut::fake_gpu::Gpu;
using wattcut::fake_gpu::Long;
using wattcut::fake_gpu::State;

constexpr uint32_t kSuccess = 0, kInvalidArgs = 1, kNotSupported = 2, kInitError = 8, kInsufficientSize = 11;
constexpr int kClockSystem = 0, kClockMemory = 4;
constexpr int kPerfAuto = 0, kPerfManual = 3;
constexpr double kEnergyResolutionUj = 15.3;
constexpr int kMaxFrequencies = 32;

struct Frequencies5 {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[kMaxFrequencies];
};
struct Frequencies6 {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[kMaxFrequencies];
};
struct Version {
  uint32_t major, minor, patch;
  const char* build;
};

int g_init_count = 0;

const char* StatePath() { return std::getenv("WATTCUT_FAKE_ROCM_SMI_STATE"); }

void Defaults(State& s) {
  const std::pair<const char*, const char*> defaults[] = {{"gpu_count", "2"},
                                                          {"name", "AMD Instinct MI300X (fake)"},
                                                          {"device_id", "29857"},
                                                          {"max_mhz", "2100"},
                                                          {"min_mhz", "500"},
                                                          {"memory_clocks", "1300,900"},
                                                          {"idle_power_mw", "140000"},
                                                          {"max_power_mw", "750000"},
                                                          {"default_limit_mw", "750000"},
                                                          {"min_limit_mw", "200000"},
                                                          {"max_limit_mw", "750000"},
                                                          {"version", "5.2.3"},
                                                          {"energy_counter_bits", "64"}};
  for (const auto& [key, value] : defaults) s.emplace(key, value);
}

template <typename Body>
uint32_t Api(const char* function, const std::string& args, Body body) {
  return wattcut::fake_gpu::Api(StatePath(), kSuccess, kInitError, Defaults, function, args, body);
}

// The GPU's index when it exists, and no injected failure of `function` on it.
uint32_t Check(const State& s, uint32_t gpu, const char* function) {
  if (static_cast<long>(gpu) >= Long(s, "gpu_count", 0)) return kInvalidArgs;
  return static_cast<uint32_t>(Long(s, Gpu(gpu, (std::string("fail.") + function).c_str()), kSuccess));
}

std::string GpuArgs(uint32_t gpu, const std::string& more = "") {
  return "GPU " + std::to_string(gpu) + (more.empty() ? "" : ", " + more);
}

// The system clock's levels as an Instinct GPU's fine-grained DPM lists them: the lowest, the clock
// it runs now where that is between, and the highest.
void SystemLevels(const State& s, uint32_t gpu, std::vector<uint64_t>& hz, uint32_t& current) {
  const long low = Long(s, "min_mhz", 500), high = Long(s, "max_mhz", 2100);
  const long now = wattcut::fake_gpu::CurrentClock(s, gpu);
  hz = {static_cast<uint64_t>(low) * 1'000'000};
  if (now > low && now < high) hz.push_back(static_cast<uint64_t>(now) * 1'000'000);
  hz.push_back(static_cast<uint64_t>(high) * 1'000'000);
  current = now <= low ? 0 : now >= high ? static_cast<uint32_t>(hz.size() - 1) : 1;
}

// The memory levels, lowest first as the driver lists them; the current one the highest allowed.
void MemoryLevels(const State& s, uint32_t gpu, std::vector<uint64_t>& hz, uint32_t& current) {
  std::vector<unsigned> mhz = wattcut::fake_gpu::Unsigneds(s, "memory_clocks");
  hz.clear();
  for (auto it = mhz.rbegin(); it != mhz.rend(); ++it) hz.push_back(static_cast<uint64_t>(*it) * 1'000'000);
  const long mask = Long(s, Gpu(gpu, "mem_mask"), 0);
  current = static_cast<uint32_t>(hz.size() - 1);
  if (mask != 0) {
    for (uint32_t i = 0; i < hz.size(); ++i) {
      if ((mask >> i) & 1) current = i;
    }
  }
}

}  // namespace

#define FAKE_INIT_CHECK() \
  if (g_init_count == 0) return kInitError

#define EXPORT __attribute__((visibility("default")))

extern "C" {

EXPORT uint32_t rsmi_init(uint64_t flags) {
  const uint32_t rc = Api("rsmi_init", std::to_string(flags), [](State&) { return kSuccess; });
  if (rc == kSuccess) ++g_init_count;
  return rc;
}

EXPORT uint32_t rsmi_shut_down() {
  FAKE_INIT_CHECK();
  --g_init_count;
  return Api("rsmi_shut_down", "", [](State&) { return kSuccess; });
}

EXPORT uint32_t rsmi_status_string(uint32_t status, const char** text) {
  if (text == nullptr) return kInvalidArgs;
  switch (status) {
    case 0:
      *text = "RSMI_STATUS_SUCCESS: The function has been executed successfully.";
      break;
    case 1:
      *text = "RSMI_STATUS_INVALID_ARGS: The provided arguments do not meet the preconditions required for input.";
      break;
    case 2:
      *text = "RSMI_STATUS_NOT_SUPPORTED: This function is not supported in the current environment.";
      break;
    case 4:
      *text = "RSMI_STATUS_PERMISSION: The user ID of the calling process does not have sufficient permission.";
      break;
    case 8:
      *text = "RSMI_STATUS_INIT_ERROR: An error occurred during initialization.";
      break;
    default:
      *text = "An unknown error occurred";
  }
  return kSuccess;
}

EXPORT uint32_t rsmi_version_get(Version* version) {
  if (version == nullptr) return kInvalidArgs;
  return Api("rsmi_version_get", "", [&](State& s) {
    *version = Version{0, 0, 0, "fake"};
    std::sscanf(s["version"].c_str(), "%u.%u.%u", &version->major, &version->minor, &version->patch);
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_num_monitor_devices(uint32_t* count) {
  FAKE_INIT_CHECK();
  return Api("rsmi_num_monitor_devices", "", [&](State& s) {
    *count = static_cast<uint32_t>(Long(s, "gpu_count", 0));
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_name_get(uint32_t gpu, char* name, size_t length) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_name_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_name_get"); rc != kSuccess) return rc;
    const std::string text = s["name"];
    if (name == nullptr || length < text.size() + 1) return kInsufficientSize;
    std::memcpy(name, text.c_str(), text.size() + 1);
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_id_get(uint32_t gpu, uint16_t* id) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_id_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_id_get"); rc != kSuccess) return rc;
    *id = static_cast<uint16_t>(Long(s, "device_id", 0x74a1));
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_unique_id_get(uint32_t gpu, uint64_t* id) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_unique_id_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_unique_id_get"); rc != kSuccess) return rc;
    *id = 0x1234abcd0000ULL + gpu;
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_pci_id_get(uint32_t gpu, uint64_t* bdf) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_pci_id_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_pci_id_get"); rc != kSuccess) return rc;
    *bdf = static_cast<uint64_t>(gpu + 1) << 8;  // bus gpu+1, device 0, function 0
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_gpu_clk_freq_get(uint32_t gpu, int type, void* out) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_gpu_clk_freq_get", GpuArgs(gpu, std::to_string(type)), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_gpu_clk_freq_get"); rc != kSuccess) return rc;
    if (out == nullptr) return kInvalidArgs;
    std::vector<uint64_t> hz;
    uint32_t current = 0;
    if (type == kClockSystem) {
      SystemLevels(s, gpu, hz, current);
    } else if (type == kClockMemory) {
      MemoryLevels(s, gpu, hz, current);
    } else {
      return kNotSupported;
    }
    if (Long(s, "version", 5) >= 6) {
      auto* f = static_cast<Frequencies6*>(out);
      *f = Frequencies6{};
      if (const long sleep_mhz = Long(s, "deep_sleep_mhz", 0); type == kClockSystem && sleep_mhz > 0) {
        hz.insert(hz.begin(), static_cast<uint64_t>(sleep_mhz) * 1'000'000);
        f->has_deep_sleep = true;
        current = Long(s, "load", 1) == 0 ? 0 : current + 1;  // an idle GPU sleeps
      }
      f->num_supported = static_cast<uint32_t>(hz.size());
      f->current = current;
      for (size_t i = 0; i < hz.size(); ++i) f->frequency[i] = hz[i];
    } else {
      auto* f = static_cast<Frequencies5*>(out);
      *f = Frequencies5{};
      f->num_supported = static_cast<uint32_t>(hz.size());
      f->current = current;
      for (size_t i = 0; i < hz.size(); ++i) f->frequency[i] = hz[i];
    }
    return kSuccess;
  });
}

// A mask of memory levels (the library's rsmi_dev_gpu_clk_freq_set); the system clock is set by
// range here (rsmi_dev_clk_range_set), as wattcut does.
EXPORT uint32_t rsmi_dev_gpu_clk_freq_set(uint32_t gpu, int type, uint64_t mask) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_gpu_clk_freq_set", GpuArgs(gpu, std::to_string(type) + "," + std::to_string(mask)),
             [&](State& s) {
               if (uint32_t rc = Check(s, gpu, "rsmi_dev_gpu_clk_freq_set"); rc != kSuccess) return rc;
               if (type != kClockMemory) return kNotSupported;
               const size_t levels = wattcut::fake_gpu::Unsigneds(s, "memory_clocks").size();
               if (mask == 0 || (mask >> levels) != 0) return kInvalidArgs;
               s[Gpu(gpu, "mem_mask")] = std::to_string(mask);
               s[Gpu(gpu, "perf")] = "manual";
               return kSuccess;
             });
}

EXPORT uint32_t rsmi_dev_clk_range_set(uint32_t gpu, uint64_t min_mhz, uint64_t max_mhz, int type) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_clk_range_set",
             GpuArgs(gpu, std::to_string(min_mhz) + "," + std::to_string(max_mhz) + "," + std::to_string(type)),
             [&](State& s) {
               if (uint32_t rc = Check(s, gpu, "rsmi_dev_clk_range_set"); rc != kSuccess) return rc;
               if (type != kClockSystem) return kNotSupported;
               if (min_mhz > max_mhz || static_cast<long>(max_mhz) > Long(s, "max_mhz", 2100) ||
                   static_cast<long>(min_mhz) < Long(s, "min_mhz", 500)) {
                 return kInvalidArgs;
               }
               s[Gpu(gpu, "locked_min")] = std::to_string(min_mhz);
               s[Gpu(gpu, "locked_max")] = std::to_string(max_mhz);
               s[Gpu(gpu, "perf")] = "manual";
               return kSuccess;
             });
}

EXPORT uint32_t rsmi_dev_perf_level_set_v1(uint32_t gpu, int level) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_perf_level_set_v1", GpuArgs(gpu, std::to_string(level)), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_perf_level_set_v1"); rc != kSuccess) return rc;
    if (level == kPerfAuto) {
      s[Gpu(gpu, "locked_min")] = "0";
      s[Gpu(gpu, "locked_max")] = "0";
      s[Gpu(gpu, "mem_mask")] = "0";
      s[Gpu(gpu, "perf")] = "auto";
      return kSuccess;
    }
    if (level == kPerfManual) {
      s[Gpu(gpu, "perf")] = "manual";
      return kSuccess;
    }
    return kNotSupported;
  });
}

EXPORT uint32_t rsmi_dev_perf_level_get(uint32_t gpu, int* level) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_perf_level_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_perf_level_get"); rc != kSuccess) return rc;
    *level = s[Gpu(gpu, "perf")] == "manual" ? kPerfManual : kPerfAuto;
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_power_ave_get(uint32_t gpu, uint32_t sensor, uint64_t* power_uw) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_power_ave_get", GpuArgs(gpu, std::to_string(sensor)), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_power_ave_get"); rc != kSuccess) return rc;
    *power_uw = static_cast<uint64_t>(Double(s, Gpu(gpu, "power_avg_mw"), 0) * 1000.0);
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_power_cap_get(uint32_t gpu, uint32_t sensor, uint64_t* cap_uw) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_power_cap_get", GpuArgs(gpu, std::to_string(sensor)), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_power_cap_get"); rc != kSuccess) return rc;
    *cap_uw = static_cast<uint64_t>(Long(s, Gpu(gpu, "power_limit_mw"), Long(s, "default_limit_mw", 0))) * 1000;
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_power_cap_default_get(uint32_t gpu, uint64_t* cap_uw) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_power_cap_default_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_power_cap_default_get"); rc != kSuccess) return rc;
    *cap_uw = static_cast<uint64_t>(Long(s, "default_limit_mw", 0)) * 1000;
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_power_cap_range_get(uint32_t gpu, uint32_t sensor, uint64_t* max_uw, uint64_t* min_uw) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_power_cap_range_get", GpuArgs(gpu, std::to_string(sensor)), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_power_cap_range_get"); rc != kSuccess) return rc;
    *max_uw = static_cast<uint64_t>(Long(s, "max_limit_mw", 0)) * 1000;
    *min_uw = static_cast<uint64_t>(Long(s, "min_limit_mw", 0)) * 1000;
    return kSuccess;
  });
}

EXPORT uint32_t rsmi_dev_power_cap_set(uint32_t gpu, uint32_t sensor, uint64_t cap_uw) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_power_cap_set", GpuArgs(gpu, std::to_string(sensor) + "," + std::to_string(cap_uw)),
             [&](State& s) {
               if (uint32_t rc = Check(s, gpu, "rsmi_dev_power_cap_set"); rc != kSuccess) return rc;
               const long mw = static_cast<long>(cap_uw / 1000);
               if (mw < Long(s, "min_limit_mw", 0) || mw > Long(s, "max_limit_mw", 0)) return kInvalidArgs;
               s[Gpu(gpu, "power_limit_mw")] = std::to_string(mw);
               return kSuccess;
             });
}

EXPORT uint32_t rsmi_dev_energy_count_get(uint32_t gpu, uint64_t* counts, float* resolution_uj, uint64_t* timestamp) {
  FAKE_INIT_CHECK();
  return Api("rsmi_dev_energy_count_get", GpuArgs(gpu), [&](State& s) {
    if (uint32_t rc = Check(s, gpu, "rsmi_dev_energy_count_get"); rc != kSuccess) return rc;
    const double energy_uj = Double(s, Gpu(gpu, "energy_mj"), 0) * 1000.0;
    uint64_t value = static_cast<uint64_t>(energy_uj / kEnergyResolutionUj);
    const long bits = Long(s, "energy_counter_bits", 64);
    if (bits > 0 && bits < 64) value &= (uint64_t{1} << bits) - 1;
    *counts = value;
    *resolution_uj = static_cast<float>(kEnergyResolutionUj);
    *timestamp = static_cast<uint64_t>(wattcut::fake_gpu::NowNs());
    return kSuccess;
  });
}

}  // extern "C"
