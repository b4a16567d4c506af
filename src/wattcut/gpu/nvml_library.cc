#include "wattcut/gpu/nvml_library.h"

#include <dlfcn.h>

namespace wattcut::nvml {

std::string ReturnName(int code) {
  switch (code) {
    case kSuccess:
      return "NVML_SUCCESS";
    case kErrorUninitialized:
      return "NVML_ERROR_UNINITIALIZED";
    case kErrorInvalidArgument:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case kErrorNotSupported:
      return "NVML_ERROR_NOT_SUPPORTED";
    case kErrorNoPermission:
      return "NVML_ERROR_NO_PERMISSION";
    case kErrorAlreadyInitialized:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case kErrorNotFound:
      return "NVML_ERROR_NOT_FOUND";
    case kErrorInsufficientSize:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case kErrorInsufficientPower:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case kErrorDriverNotLoaded:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case kErrorTimeout:
      return "NVML_ERROR_TIMEOUT";
    case kErrorIrqIssue:
      return "NVML_ERROR_IRQ_ISSUE";
    case kErrorLibraryNotFound:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case kErrorFunctionNotFound:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case kErrorCorruptedInforom:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case kErrorGpuIsLost:
      return "NVML_ERROR_GPU_IS_LOST";
    case kErrorResetRequired:
      return "NVML_ERROR_RESET_REQUIRED";
    case kErrorOperatingSystem:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case kErrorLibRmVersionMismatch:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case kErrorInUse:
      return "NVML_ERROR_IN_USE";
    case kErrorMemory:
      return "NVML_ERROR_MEMORY";
    case kErrorNoData:
      return "NVML_ERROR_NO_DATA";
    case kErrorUnknown:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML error " + std::to_string(code);
  }
}

namespace {

template <typename F>
void Resolve(void* handle, const char* symbol, F& slot) {
  slot = reinterpret_cast<F>(dlsym(handle, symbol));
}

}  // namespace

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Open(const std::string& library_name) {
  std::unique_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->library_name_ = library_name;
  dlerror();
  lib->handle_ = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* why = dlerror();
    return Error{"cannot load NVML (" + library_name + "): " + (why ? why : "unknown dlopen error") +
                 ". Is the NVIDIA driver installed? NVML ships with it; on a machine without an "
                 "NVIDIA GPU use --backend simulated"};
  }
  Functions& f = lib->fn_;
  void* h = lib->handle_;
  Resolve(h, "nvmlInit_v2", f.nvmlInit_v2);
  Resolve(h, "nvmlShutdown", f.nvmlShutdown);
  Resolve(h, "nvmlErrorString", f.nvmlErrorString);
  Resolve(h, "nvmlDeviceGetCount_v2", f.nvmlDeviceGetCount_v2);
  Resolve(h, "nvmlDeviceGetHandleByIndex_v2", f.nvmlDeviceGetHandleByIndex_v2);
  Resolve(h, "nvmlDeviceGetName", f.nvmlDeviceGetName);
  Resolve(h, "nvmlDeviceGetUUID", f.nvmlDeviceGetUUID);
  Resolve(h, "nvmlDeviceGetSupportedMemoryClocks", f.nvmlDeviceGetSupportedMemoryClocks);
  Resolve(h, "nvmlDeviceGetSupportedGraphicsClocks", f.nvmlDeviceGetSupportedGraphicsClocks);
  Resolve(h, "nvmlDeviceSetGpuLockedClocks", f.nvmlDeviceSetGpuLockedClocks);
  Resolve(h, "nvmlDeviceResetGpuLockedClocks", f.nvmlDeviceResetGpuLockedClocks);
  Resolve(h, "nvmlDeviceSetMemoryLockedClocks", f.nvmlDeviceSetMemoryLockedClocks);
  Resolve(h, "nvmlDeviceResetMemoryLockedClocks", f.nvmlDeviceResetMemoryLockedClocks);
  Resolve(h, "nvmlDeviceGetPowerUsage", f.nvmlDeviceGetPowerUsage);
  Resolve(h, "nvmlDeviceGetTotalEnergyConsumption", f.nvmlDeviceGetTotalEnergyConsumption);
  Resolve(h, "nvmlDeviceGetClockInfo", f.nvmlDeviceGetClockInfo);
  Resolve(h, "nvmlDeviceSetPowerManagementLimit", f.nvmlDeviceSetPowerManagementLimit);
  Resolve(h, "nvmlDeviceGetPowerManagementLimit", f.nvmlDeviceGetPowerManagementLimit);
  Resolve(h, "nvmlDeviceGetPowerManagementDefaultLimit", f.nvmlDeviceGetPowerManagementDefaultLimit);
  Resolve(h, "nvmlDeviceGetPowerManagementLimitConstraints", f.nvmlDeviceGetPowerManagementLimitConstraints);
  Resolve(h, "nvmlDeviceGetFieldValues", f.nvmlDeviceGetFieldValues);
  Resolve(h, "nvmlDeviceGetPciInfo_v3", f.nvmlDeviceGetPciInfo_v3);
  Resolve(h, "nvmlDeviceGetPersistenceMode", f.nvmlDeviceGetPersistenceMode);

  for (auto [fn, symbol] :
       {std::pair<const void*, const char*>{reinterpret_cast<const void*>(f.nvmlInit_v2), "nvmlInit_v2"},
        {reinterpret_cast<const void*>(f.nvmlShutdown), "nvmlShutdown"},
        {reinterpret_cast<const void*>(f.nvmlErrorString), "nvmlErrorString"}}) {
    if (fn == nullptr) {
      return Error{library_name + " lacks " + symbol + "; it is not a usable NVML (driver too old?)"};
    }
  }
  const int rc = f.nvmlInit_v2();
  if (rc != kSuccess) return lib->MakeError("nvmlInit_v2()", rc);
  lib->initialised_ = true;
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialised_ && fn_.nvmlShutdown != nullptr) fn_.nvmlShutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

Status NvmlLibrary::Require(const void* function, const char* function_name) const {
  if (function != nullptr) return Status::Ok();
  return Error{std::string(function_name) + " is missing from " + library_name_ +
               ": the installed NVIDIA driver is too old for it"};
}

Error NvmlLibrary::MakeError(const std::string& call, int code) const {
  std::string text = fn_.nvmlErrorString != nullptr ? fn_.nvmlErrorString(code) : "";
  std::string message = call + ": " + (text.empty() ? "error" : text) + " (" + ReturnName(code) + ")";
  switch (code) {
    case kErrorNoPermission:
      message +=
          ": changing clocks and power limits needs root or CAP_SYS_ADMIN "
          "(in a container: --cap-add SYS_ADMIN); reading needs neither";
      break;
    case kErrorNotSupported:
      message +=
          ": this GPU or driver does not support it (clock locking needs Volta or newer, "
          "the energy counter Volta or newer, memory clock locking Ampere or newer)";
      break;
    case kErrorDriverNotLoaded:
      message += ": the NVIDIA kernel driver is not loaded";
      break;
    case kErrorLibRmVersionMismatch:
      message += ": libnvidia-ml and the kernel driver differ in version; reboot or reload the driver";
      break;
    case kErrorGpuIsLost:
      message += ": the GPU fell off the bus; it needs a reset";
      break;
    case kErrorInvalidArgument:
      message += ": the value is out of the GPU's range";
      break;
    default:
      break;
  }
  return Error{message};
}

}  // namespace wattcut::nvml
