// NVML loaded at run time: dlopen("libnvidia-ml.so.1") and our own declarations of the few
// functions wattcut uses, so no NVML header or library is needed to build. Signatures and return
// codes follow the NVML API reference (docs.nvidia.com/deploy/nvml-api).
#pragma once

#include <memory>
#include <string>

#include "wattcut/base/result.h"

namespace wattcut::nvml {

// nvmlReturn_t values used by wattcut.
enum Return : int {
  kSuccess = 0,
  kErrorUninitialized = 1,
  kErrorInvalidArgument = 2,
  kErrorNotSupported = 3,
  kErrorNoPermission = 4,
  kErrorAlreadyInitialized = 5,
  kErrorNotFound = 6,
  kErrorInsufficientSize = 7,
  kErrorInsufficientPower = 8,
  kErrorDriverNotLoaded = 9,
  kErrorTimeout = 10,
  kErrorIrqIssue = 11,
  kErrorLibraryNotFound = 12,
  kErrorFunctionNotFound = 13,
  kErrorCorruptedInforom = 14,
  kErrorGpuIsLost = 15,
  kErrorResetRequired = 16,
  kErrorOperatingSystem = 17,
  kErrorLibRmVersionMismatch = 18,
  kErrorInUse = 19,
  kErrorMemory = 20,
  kErrorNoData = 21,
  kErrorUnknown = 999,
};

// nvmlFieldValue_t (nvml.h): one field asked of nvmlDeviceGetFieldValues and its answer.
struct FieldValue {
  unsigned field_id = 0;
  unsigned scope_id = 0;
  long long timestamp_us = 0;
  long long latency_us = 0;
  int value_type = 0;   // nvmlValueType_t: 0 double, 1 unsigned int, 2 unsigned long, 3 unsigned long long, 4 signed
                        // long long, 5 int, 6 unsigned short
  int nvml_return = 0;  // this field's nvmlReturn_t
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value{};
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
inline constexpr unsigned kFieldPowerAverage = 185;  // NVML_FI_DEV_POWER_AVERAGE: mW over 1 s
inline constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT: mW now

// nvmlPciInfo_t (nvml.h, _v3).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_sub_system_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");

// nvmlClockType_t.
enum ClockType : int { kClockGraphics = 0, kClockSm = 1, kClockMem = 2, kClockVideo = 3 };

// "NVML_ERROR_NO_PERMISSION", ... ("NVML error <code>" for others).
std::string ReturnName(int code);

inline constexpr unsigned kDeviceNameBufferSize = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 80;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct DeviceStruct;  // opaque nvmlDevice_st
using Device = DeviceStruct*;

// The function table. Members are null for symbols the loaded library lacks (an old driver);
// NvmlLibrary::Require reports them.
struct Functions {
  int (*nvmlInit_v2)() = nullptr;
  int (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(int) = nullptr;
  int (*nvmlDeviceGetCount_v2)(unsigned*) = nullptr;
  int (*nvmlDeviceGetHandleByIndex_v2)(unsigned, Device*) = nullptr;
  int (*nvmlDeviceGetName)(Device, char*, unsigned) = nullptr;
  int (*nvmlDeviceGetUUID)(Device, char*, unsigned) = nullptr;
  int (*nvmlDeviceGetSupportedMemoryClocks)(Device, unsigned*, unsigned*) = nullptr;
  int (*nvmlDeviceGetSupportedGraphicsClocks)(Device, unsigned, unsigned*, unsigned*) = nullptr;
  int (*nvmlDeviceSetGpuLockedClocks)(Device, unsigned, unsigned) = nullptr;
  int (*nvmlDeviceResetGpuLockedClocks)(Device) = nullptr;
  int (*nvmlDeviceSetMemoryLockedClocks)(Device, unsigned, unsigned) = nullptr;
  int (*nvmlDeviceResetMemoryLockedClocks)(Device) = nullptr;
  int (*nvmlDeviceGetPowerUsage)(Device, unsigned*) = nullptr;
  int (*nvmlDeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;
  int (*nvmlDeviceGetClockInfo)(Device, int, unsigned*) = nullptr;
  int (*nvmlDeviceSetPowerManagementLimit)(Device, unsigned) = nullptr;
  int (*nvmlDeviceGetPowerManagementLimit)(Device, unsigned*) = nullptr;
  int (*nvmlDeviceGetPowerManagementDefaultLimit)(Device, unsigned*) = nullptr;
  int (*nvmlDeviceGetPowerManagementLimitConstraints)(Device, unsigned*, unsigned*) = nullptr;
  int (*nvmlDeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;  // NVML 10 on
  int (*nvmlDeviceGetPciInfo_v3)(Device, PciInfo*) = nullptr;
  int (*nvmlDeviceGetPersistenceMode)(Device, int*) = nullptr;  // nvmlEnableState_t: 0 off, 1 on
};

inline constexpr const char* kDefaultLibraryName = "libnvidia-ml.so.1";

// An opened and initialised NVML (nvmlInit_v2 done; nvmlShutdown and dlclose on destruction).
class NvmlLibrary {
 public:
  // dlopen(library_name) (found through the usual loader search: LD_LIBRARY_PATH, ld.so.cache),
  // resolve the symbols, nvmlInit_v2. Fails with what to check when the library is missing,
  // lacks nvmlInit_v2, or NVML does not initialise (no driver, no GPU).
  static Result<std::unique_ptr<NvmlLibrary>> Open(const std::string& library_name = kDefaultLibraryName);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const Functions& fn() const { return fn_; }
  const std::string& library_name() const { return library_name_; }

  // Fails when the named function was not found in the library.
  Status Require(const void* function, const char* function_name) const;
  // "<call>: <nvmlErrorString> (<NVML_ERROR_X>)" plus advice for NO_PERMISSION, NOT_SUPPORTED
  // and the driver/GPU errors. `call` says what was attempted, e.g. "nvmlDeviceSetGpuLockedClocks(GPU 0, 1200, 1200)".
  Error MakeError(const std::string& call, int code) const;

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string library_name_;
  Functions fn_;
};

}  // namespace wattcut::nvml
