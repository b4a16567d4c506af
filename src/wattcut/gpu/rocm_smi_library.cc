#include "wattcut/gpu/rocm_smi_library.h"

#include <dlfcn.h>

#include <array>
#include <utility>

namespace wattcut::rocm_smi {

std::string StatusName(uint32_t code) {
  static constexpr std::array<const char*, 18> kNames = {"RSMI_STATUS_SUCCESS",
                                                         "RSMI_STATUS_INVALID_ARGS",
                                                         "RSMI_STATUS_NOT_SUPPORTED",
                                                         "RSMI_STATUS_FILE_ERROR",
                                                         "RSMI_STATUS_PERMISSION",
                                                         "RSMI_STATUS_OUT_OF_RESOURCES",
                                                         "RSMI_STATUS_INTERNAL_EXCEPTION",
                                                         "RSMI_STATUS_INPUT_OUT_OF_BOUNDS",
                                                         "RSMI_STATUS_INIT_ERROR",
                                                         "RSMI_STATUS_NOT_YET_IMPLEMENTED",
                                                         "RSMI_STATUS_NOT_FOUND",
                                                         "RSMI_STATUS_INSUFFICIENT_SIZE",
                                                         "RSMI_STATUS_INTERRUPT",
                                                         "RSMI_STATUS_UNEXPECTED_SIZE",
                                                         "RSMI_STATUS_NO_DATA",
                                                         "RSMI_STATUS_UNEXPECTED_DATA",
                                                         "RSMI_STATUS_BUSY",
                                                         "RSMI_STATUS_REFCOUNT_OVERFLOW"};
  if (code < kNames.size()) return kNames[code];
  if (code == kUnknownError) return "RSMI_STATUS_UNKNOWN_ERROR";
  return "rsmi status " + std::to_string(code);
}

namespace {

template <typename F>
void Resolve(void* handle, const char* symbol, F& slot) {
  slot = reinterpret_cast<F>(dlsym(handle, symbol));
}

void ResolveAll(void* h, Functions& f) {
  Resolve(h, "rsmi_init", f.rsmi_init);
  Resolve(h, "rsmi_shut_down", f.rsmi_shut_down);
  Resolve(h, "rsmi_status_string", f.rsmi_status_string);
  Resolve(h, "rsmi_version_get", f.rsmi_version_get);
  Resolve(h, "rsmi_num_monitor_devices", f.rsmi_num_monitor_devices);
  Resolve(h, "rsmi_dev_name_get", f.rsmi_dev_name_get);
  Resolve(h, "rsmi_dev_id_get", f.rsmi_dev_id_get);
  Resolve(h, "rsmi_dev_unique_id_get", f.rsmi_dev_unique_id_get);
  Resolve(h, "rsmi_dev_pci_id_get", f.rsmi_dev_pci_id_get);
  Resolve(h, "rsmi_dev_gpu_clk_freq_get", f.rsmi_dev_gpu_clk_freq_get);
  Resolve(h, "rsmi_dev_gpu_clk_freq_set", f.rsmi_dev_gpu_clk_freq_set);
  Resolve(h, "rsmi_dev_clk_range_set", f.rsmi_dev_clk_range_set);
  Resolve(h, "rsmi_dev_perf_level_set_v1", f.rsmi_dev_perf_level_set_v1);
  Resolve(h, "rsmi_dev_perf_level_get", f.rsmi_dev_perf_level_get);
  Resolve(h, "rsmi_dev_power_ave_get", f.rsmi_dev_power_ave_get);
  Resolve(h, "rsmi_dev_power_cap_get", f.rsmi_dev_power_cap_get);
  Resolve(h, "rsmi_dev_power_cap_default_get", f.rsmi_dev_power_cap_default_get);
  Resolve(h, "rsmi_dev_power_cap_range_get", f.rsmi_dev_power_cap_range_get);
  Resolve(h, "rsmi_dev_power_cap_set", f.rsmi_dev_power_cap_set);
  Resolve(h, "rsmi_dev_energy_count_get", f.rsmi_dev_energy_count_get);
}

}  // namespace

Result<std::unique_ptr<RocmSmiLibrary>> RocmSmiLibrary::Open(const std::string& library_name) {
  std::unique_ptr<RocmSmiLibrary> lib(new RocmSmiLibrary());
  lib->library_name_ = library_name;
  dlerror();
  lib->handle_ = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* why = dlerror();
    return Error{"cannot load ROCm SMI (" + library_name + "): " + (why ? why : "unknown dlopen error") +
                 ". On Debian 12: apt-get install librocm-smi64-1; with ROCm installed: "
                 "--rocm-smi-library /opt/rocm/lib/librocm_smi64.so.1; on a machine without an AMD GPU "
                 "use --backend simulated"};
  }
  Functions& f = lib->fn_;
  ResolveAll(lib->handle_, f);
  for (auto [fn, symbol] :
       {std::pair<const void*, const char*>{reinterpret_cast<const void*>(f.rsmi_init), "rsmi_init"},
        {reinterpret_cast<const void*>(f.rsmi_shut_down), "rsmi_shut_down"},
        {reinterpret_cast<const void*>(f.rsmi_status_string), "rsmi_status_string"}}) {
    if (fn == nullptr) return Error{library_name + " lacks " + symbol + "; it is not a usable ROCm SMI library"};
  }
  if (f.rsmi_version_get != nullptr) {
    Version v{0, 0, 0, nullptr};
    if (f.rsmi_version_get(&v) == kSuccess) lib->version_ = v;
  }
  const uint32_t rc = f.rsmi_init(0);
  if (rc != kSuccess) {
    Error e = lib->MakeError("rsmi_init(0)", rc);
    return Error{e.message +
                 ": ROCm SMI found no usable amdgpu device under /sys/class/drm and "
                 "/sys/class/kfd (is the amdgpu driver loaded? rocm-smi shows what it sees)"};
  }
  lib->initialised_ = true;
  return lib;
}

RocmSmiLibrary::~RocmSmiLibrary() {
  if (initialised_ && fn_.rsmi_shut_down != nullptr) fn_.rsmi_shut_down();
  if (handle_ != nullptr) dlclose(handle_);
}

std::string RocmSmiLibrary::version_text() const {
  if (version_.major == 0 && version_.minor == 0 && version_.patch == 0) return "unknown";
  return std::to_string(version_.major) + "." + std::to_string(version_.minor) + "." + std::to_string(version_.patch);
}

::wattcut::Status RocmSmiLibrary::Require(const void* function, const char* function_name) const {
  if (function != nullptr) return ::wattcut::Status::Ok();
  return Error{std::string(function_name) + " is missing from " + library_name_ + " (ROCm SMI " + version_text() +
               "): it is too old for it"};
}

Error RocmSmiLibrary::MakeError(const std::string& call, uint32_t code) const {
  const char* text = nullptr;
  if (fn_.rsmi_status_string != nullptr) fn_.rsmi_status_string(code, &text);
  std::string message =
      call + ": " + (text != nullptr && *text != '\0' ? text : "error") + " (" + StatusName(code) + ")";
  switch (code) {
    case kPermission:
      message +=
          ": changing clocks and power caps writes the amdgpu driver's sysfs files, which needs root "
          "(in a container: the files mounted writable); reading needs neither";
      break;
    case kNotSupported:
    case kNotYetImplemented:
      message += ": this GPU, its driver or this ROCm SMI does not offer it";
      return Error::NotFound(message);
    case kFileError:
      message += ": a driver file ROCm SMI needs is missing or unreadable (an amdgpu driver too old for it?)";
      break;
    case kInvalidArgs:
    case kInputOutOfBounds:
      message += ": the value is out of the GPU's range";
      return Error::InvalidArgument(message);
    case kBusy:
      message += ": another process holds ROCm SMI's lock on this GPU; try again";
      break;
    default:
      break;
  }
  return Error::DeviceError(message);
}

}  // namespace wattcut::rocm_smi
