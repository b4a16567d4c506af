// A fake libnvidia-ml.so.1 for tests: the same C ABI as the NVIDIA library for the functions
// wattcut uses, with its state in a file shared between processes (fake_nvml_state.h). Built
// twice: the full library, and with WATTCUT_FAKE_NVML_OLD_DRIVER an "old driver" that lacks
// nvmlDeviceGetTotalEnergyConsumption, nvmlDeviceSetMemoryLockedClocks and nvmlDeviceGetFieldValues.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_nvml/fake_gpu_model.h"

namespace {

using wattcut::fake_nvml::State;

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotFound = 6, kInsufficientSize = 7,
              kDriverNotLoaded = 9;
using wattcut::fake_gpu::kMaxGpus;

struct Device {
  unsigned index;
};
Device g_devices[kMaxGpus];
int g_init_count = 0;  // per process, like the real library's reference count

const char* StatePath() { return std::getenv("WATTCUT_FAKE_NVML_STATE"); }

using wattcut::fake_gpu::CurrentClock;
using wattcut::fake_gpu::Double;
using wattcut::fake_gpu::Gpu;
using wattcut::fake_gpu::Long;
using wattcut::fake_gpu::NowNs;
using wattcut::fake_gpu::PowerMw;

void Defaults(State& s) {
  const std::pair<const char*, const char*> defaults[] = {{"gpu_count", "2"},
                                                          {"name", "NVIDIA A100-SXM4-80GB (fake)"},
                                                          {"max_mhz", "1410"},
                                                          {"min_mhz", "210"},
                                                          {"step_mhz", "15"},
                                                          {"memory_clocks", "1593,1215"},
                                                          {"idle_power_mw", "60000"},
                                                          {"max_power_mw", "400000"},
                                                          {"default_limit_mw", "400000"},
                                                          {"min_limit_mw", "100000"},
                                                          {"max_limit_mw", "400000"}};
  for (const auto& [key, value] : defaults) s.emplace(key, value);
}

// Runs one API call (fake_gpu_model.h's Api, with this library's state file and defaults).
template <typename Body>
int Api(const char* function, const std::string& args, Body body) {
  return wattcut::fake_gpu::Api(StatePath(), kSuccess, kDriverNotLoaded, Defaults, function, args, body);
}

// An injected failure of `function` on one GPU only ("gpu<i>.fail.<function>=<rc>"), for the
// setters: kSuccess when there is none.
int GpuFailure(const State& s, unsigned gpu, const char* function) {
  return static_cast<int>(Long(s, Gpu(gpu, (std::string("fail.") + function).c_str()), kSuccess));
}

// "GPU <index>, " in front of a clock setter's logged arguments, so a log names the GPU.
std::string GpuArg(const Device* device) {
  return device == nullptr ? std::string("GPU ?, ") : "GPU " + std::to_string(device->index) + ", ";
}

int DeviceIndex(const State& s, Device* device, unsigned* out) {
  if (device == nullptr) return kInvalidArgument;
  if (static_cast<long>(device->index) >= Long(s, "gpu_count", 0)) return kInvalidArgument;
  *out = device->index;
  return kSuccess;
}

std::vector<unsigned> MemoryClocks(const State& s) { return wattcut::fake_gpu::Unsigneds(s, "memory_clocks"); }

int CopyList(const std::vector<unsigned>& list, unsigned* count, unsigned* out) {
  if (count == nullptr) return kInvalidArgument;
  if (*count < list.size() || out == nullptr) {
    *count = static_cast<unsigned>(list.size());
    return kInsufficientSize;
  }
  for (size_t i = 0; i < list.size(); ++i) out[i] = list[i];
  *count = static_cast<unsigned>(list.size());
  return kSuccess;
}

int CopyString(const std::string& text, char* out, unsigned length) {
  if (out == nullptr) return kInvalidArgument;
  if (length < text.size() + 1) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

#define FAKE_INIT_CHECK() \
  if (g_init_count == 0) return kUninitialized

extern "C" {

__attribute__((visibility("default"))) int nvmlInit_v2() {
  const int rc = Api("nvmlInit_v2", "", [](State&) { return kSuccess; });
  if (rc == kSuccess) {
    ++g_init_count;
    for (unsigned i = 0; i < kMaxGpus; ++i) g_devices[i].index = i;
  }
  return rc;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  FAKE_INIT_CHECK();
  --g_init_count;
  return Api("nvmlShutdown", "", [](State&) { return kSuccess; });
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int result) {
  switch (result) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 5:
      return "Already Initialized";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 8:
      return "Insufficient External Power";
    case 9:
      return "Driver Not Loaded";
    case 10:
      return "Timeout";
    case 12:
      return "NVML Shared Library Not Found";
    case 13:
      return "Function Not Found";
    case 15:
      return "GPU is lost";
    case 18:
      return "RM has detected an NVML/RM version mismatch.";
    default:
      return "Unknown Error";
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetCount_v2", "", [&](State& s) {
    if (count == nullptr) return kInvalidArgument;
    *count = static_cast<unsigned>(Long(s, "gpu_count", 0));
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned index, Device** device) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetHandleByIndex_v2", std::to_string(index), [&](State& s) {
    if (device == nullptr || static_cast<long>(index) >= Long(s, "gpu_count", 0) || index >= kMaxGpus) {
      return kInvalidArgument;
    }
    *device = &g_devices[index];
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(Device* device, char* name, unsigned length) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetName", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    return CopyString(s["name"], name, length);
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetUUID(Device* device, char* uuid, unsigned length) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetUUID", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    return CopyString("GPU-fake0000-0000-0000-0000-00000000000" + std::to_string(gpu), uuid, length);
  });
}

// nvmlPciInfo_t as nvml.h lays it out (68 bytes). GPU i is at 0000:<0x18 + i>:00.0.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_sub_system_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t");

__attribute__((visibility("default"))) int nvmlDeviceGetPciInfo_v3(Device* device, PciInfo* pci) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPciInfo_v3", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (pci == nullptr) return kInvalidArgument;
    *pci = PciInfo{};
    pci->domain = 0;
    pci->bus = 0x18 + gpu;
    pci->device = 0;
    std::snprintf(pci->bus_id, sizeof pci->bus_id, "00000000:%02X:00.0", pci->bus);
    std::snprintf(pci->bus_id_legacy, sizeof pci->bus_id_legacy, "0000:%02X:00.0", pci->bus);
    return kSuccess;
  });
}

// "gpu<i>.persistence_mode": 1 (the default) or 0.
__attribute__((visibility("default"))) int nvmlDeviceGetPersistenceMode(Device* device, int* mode) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPersistenceMode", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (mode == nullptr) return kInvalidArgument;
    *mode = static_cast<int>(Long(s, Gpu(gpu, "persistence_mode"), 1));
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetSupportedMemoryClocks(Device* device, unsigned* count,
                                                                              unsigned* clocks) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetSupportedMemoryClocks", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    return CopyList(MemoryClocks(s), count, clocks);
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetSupportedGraphicsClocks(Device* device, unsigned memory_mhz,
                                                                                unsigned* count, unsigned* clocks) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetSupportedGraphicsClocks", std::to_string(memory_mhz), [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    const auto memory = MemoryClocks(s);
    bool known = false;
    for (unsigned m : memory) known = known || m == memory_mhz;
    if (!known) return kNotFound;
    std::vector<unsigned> list;
    for (long f = Long(s, "max_mhz", 1410); f >= Long(s, "min_mhz", 210); f -= Long(s, "step_mhz", 15)) {
      list.push_back(static_cast<unsigned>(f));
    }
    return CopyList(list, count, clocks);
  });
}

__attribute__((visibility("default"))) int nvmlDeviceSetGpuLockedClocks(Device* device, unsigned min_mhz,
                                                                        unsigned max_mhz) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceSetGpuLockedClocks", GpuArg(device) + std::to_string(min_mhz) + "," + std::to_string(max_mhz),
             [&](State& s) {
               unsigned gpu;
               if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
               if (int rc = GpuFailure(s, gpu, "nvmlDeviceSetGpuLockedClocks"); rc != kSuccess) return rc;
               if (min_mhz > max_mhz || static_cast<long>(max_mhz) > Long(s, "max_mhz", 1410) ||
                   static_cast<long>(min_mhz) < Long(s, "min_mhz", 210)) {
                 return kInvalidArgument;
               }
               s[Gpu(gpu, "locked_min")] = std::to_string(min_mhz);
               s[Gpu(gpu, "locked_max")] = std::to_string(max_mhz);
               return kSuccess;
             });
}

__attribute__((visibility("default"))) int nvmlDeviceResetGpuLockedClocks(Device* device) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceResetGpuLockedClocks", "GPU " + std::to_string(device ? static_cast<int>(device->index) : -1),
             [&](State& s) {
               unsigned gpu;
               if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
               s[Gpu(gpu, "locked_min")] = "0";
               s[Gpu(gpu, "locked_max")] = "0";
               return kSuccess;
             });
}

#ifndef WATTCUT_FAKE_NVML_OLD_DRIVER
__attribute__((visibility("default"))) int nvmlDeviceSetMemoryLockedClocks(Device* device, unsigned min_mhz,
                                                                           unsigned max_mhz) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceSetMemoryLockedClocks",
             GpuArg(device) + std::to_string(min_mhz) + "," + std::to_string(max_mhz), [&](State& s) {
               unsigned gpu;
               if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
               if (int rc = GpuFailure(s, gpu, "nvmlDeviceSetMemoryLockedClocks"); rc != kSuccess) return rc;
               bool known = false;
               for (unsigned m : MemoryClocks(s)) known = known || m == max_mhz;
               if (!known || min_mhz > max_mhz) return kInvalidArgument;
               s[Gpu(gpu, "mem_locked")] = std::to_string(max_mhz);
               return kSuccess;
             });
}
#endif

__attribute__((visibility("default"))) int nvmlDeviceResetMemoryLockedClocks(Device* device) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceResetMemoryLockedClocks", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    s[Gpu(gpu, "mem_locked")] = "0";
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(Device* device, unsigned* power_mw) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPowerUsage", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (power_mw == nullptr) return kInvalidArgument;
    *power_mw = static_cast<unsigned>(std::lround(PowerMw(s, gpu)));
    return kSuccess;
  });
}

#ifndef WATTCUT_FAKE_NVML_OLD_DRIVER
// nvmlFieldValue_t as nvml.h lays it out (40 bytes).
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp_us;
  long long latency_us;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t");

// The power fields: 186 the instant power, 185 the 1 s average ("gpu<i>.no_power_average" = 1: a
// GPU without it, NOT_SUPPORTED for that field, as GA100 answers); any other field NOT_SUPPORTED.
__attribute__((visibility("default"))) int nvmlDeviceGetFieldValues(Device* device, int count, FieldValue* values) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetFieldValues", std::to_string(count), [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (values == nullptr || count <= 0) return kInvalidArgument;
    constexpr int kNotSupported = 3;
    for (int i = 0; i < count; ++i) {
      FieldValue& f = values[i];
      f.timestamp_us = NowNs() / 1000;
      f.latency_us = 0;
      f.value_type = 1;  // unsigned int
      f.nvml_return = kSuccess;
      if (f.field_id == 186) {
        f.value.ui = static_cast<unsigned>(std::lround(PowerMw(s, gpu)));
      } else if (f.field_id == 185 && Long(s, Gpu(gpu, "no_power_average"), 0) == 0) {
        f.value.ui = static_cast<unsigned>(std::lround(Double(s, Gpu(gpu, "power_avg_mw"), PowerMw(s, gpu))));
      } else {
        f.nvml_return = kNotSupported;
      }
    }
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetTotalEnergyConsumption(Device* device,
                                                                               unsigned long long* energy_mj) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetTotalEnergyConsumption", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (energy_mj == nullptr) return kInvalidArgument;
    *energy_mj = static_cast<unsigned long long>(Double(s, Gpu(gpu, "energy_mj"), 0));
    return kSuccess;
  });
}
#endif

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(Device* device, int type, unsigned* clock_mhz) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetClockInfo", std::to_string(type), [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (clock_mhz == nullptr || type < 0 || type > 3) return kInvalidArgument;
    if (type == 2) {
      const long locked = Long(s, Gpu(gpu, "mem_locked"), 0);
      *clock_mhz = static_cast<unsigned>(locked > 0 ? locked : static_cast<long>(MemoryClocks(s).front()));
    } else {
      *clock_mhz = static_cast<unsigned>(CurrentClock(s, gpu));
    }
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceSetPowerManagementLimit(Device* device, unsigned limit_mw) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceSetPowerManagementLimit", std::to_string(limit_mw), [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (int rc = GpuFailure(s, gpu, "nvmlDeviceSetPowerManagementLimit"); rc != kSuccess) return rc;
    if (static_cast<long>(limit_mw) < Long(s, "min_limit_mw", 0) ||
        static_cast<long>(limit_mw) > Long(s, "max_limit_mw", 0)) {
      return kInvalidArgument;
    }
    s[Gpu(gpu, "power_limit_mw")] = std::to_string(limit_mw);
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerManagementLimit(Device* device, unsigned* limit_mw) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPowerManagementLimit", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (limit_mw == nullptr) return kInvalidArgument;
    *limit_mw = static_cast<unsigned>(Long(s, Gpu(gpu, "power_limit_mw"), Long(s, "default_limit_mw", 0)));
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerManagementDefaultLimit(Device* device,
                                                                                    unsigned* limit_mw) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPowerManagementDefaultLimit", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (limit_mw == nullptr) return kInvalidArgument;
    *limit_mw = static_cast<unsigned>(Long(s, "default_limit_mw", 0));
    return kSuccess;
  });
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerManagementLimitConstraints(Device* device,
                                                                                        unsigned* min_mw,
                                                                                        unsigned* max_mw) {
  FAKE_INIT_CHECK();
  return Api("nvmlDeviceGetPowerManagementLimitConstraints", "", [&](State& s) {
    unsigned gpu;
    if (int rc = DeviceIndex(s, device, &gpu); rc != kSuccess) return rc;
    if (min_mw == nullptr || max_mw == nullptr) return kInvalidArgument;
    *min_mw = static_cast<unsigned>(Long(s, "min_limit_mw", 0));
    *max_mw = static_cast<unsigned>(Long(s, "max_limit_mw", 0));
    return kSuccess;
  });
}

}  // extern "C"
