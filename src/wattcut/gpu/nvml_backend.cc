#include "wattcut/gpu/nvml_backend.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "wattcut/gpu/clock_kind.h"

namespace wattcut {
namespace {

class NvmlBackend final : public GpuBackend {
 public:
  explicit NvmlBackend(std::unique_ptr<nvml::NvmlLibrary> lib, int count)
      : lib_(std::move(lib)), handles_(static_cast<size_t>(count), nullptr), count_(count) {}

  std::string name() const override { return "nvml"; }

  Result<int> DeviceCount() override { return count_; }

  Result<GpuInfo> Info(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    GpuInfo info;
    info.index = gpu;
    char buffer[nvml::kDeviceNameBufferSize] = {};
    if (Status s =
            Call(F().nvmlDeviceGetName, "nvmlDeviceGetName", gpu, "", *device, buffer, nvml::kDeviceNameBufferSize);
        !s.ok()) {
      return s.error();
    }
    info.name = buffer;
    char uuid[nvml::kDeviceUuidBufferSize] = {};
    if (Status s =
            Call(F().nvmlDeviceGetUUID, "nvmlDeviceGetUUID", gpu, "", *device, uuid, nvml::kDeviceUuidBufferSize);
        !s.ok()) {
      return s.error();
    }
    info.uuid = uuid;
    // The PCI address is for matching GPUs across tools (zeusd's /discover); a driver without the
    // call, or a failed one, leaves it unknown rather than failing discovery.
    nvml::PciInfo pci{};
    if (F().nvmlDeviceGetPciInfo_v3 != nullptr && F().nvmlDeviceGetPciInfo_v3(*device, &pci) == nvml::kSuccess) {
      char text[32];
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
      info.pci_address = text;
    }
    return info;
  }

  Result<bool> PersistenceMode(int gpu) override {
    if (F().nvmlDeviceGetPersistenceMode == nullptr) {
      return Error::NotFound("this driver's NVML lacks nvmlDeviceGetPersistenceMode");
    }
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    int mode = 0;
    if (Status s = Call(F().nvmlDeviceGetPersistenceMode, "nvmlDeviceGetPersistenceMode", gpu, "", *device, &mode);
        !s.ok()) {
      return s.error();
    }
    return mode == 1;
  }

  Result<std::vector<int>> SupportedMemoryClocksMhz(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    return ReadClockList(F().nvmlDeviceGetSupportedMemoryClocks, "nvmlDeviceGetSupportedMemoryClocks", gpu, "",
                         [&](unsigned* count, unsigned* clocks) {
                           return F().nvmlDeviceGetSupportedMemoryClocks(*device, count, clocks);
                         });
  }

  Result<std::vector<int>> SupportedGraphicsClocksMhz(int gpu, int memory_clock_mhz) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    return ReadClockList(F().nvmlDeviceGetSupportedGraphicsClocks, "nvmlDeviceGetSupportedGraphicsClocks", gpu,
                         std::to_string(memory_clock_mhz) + " MHz", [&](unsigned* count, unsigned* clocks) {
                           return F().nvmlDeviceGetSupportedGraphicsClocks(
                               *device, static_cast<unsigned>(memory_clock_mhz), count, clocks);
                         });
  }

  Status LockGpuClocks(int gpu, int min_mhz, int max_mhz) override {
    return LockClocks(ClockKind::kSm, gpu, min_mhz, max_mhz);
  }
  Status ResetGpuClocks(int gpu) override { return ResetClocks(ClockKind::kSm, gpu); }
  Status LockMemoryClocks(int gpu, int min_mhz, int max_mhz) override {
    return LockClocks(ClockKind::kMemory, gpu, min_mhz, max_mhz);
  }
  Status ResetMemoryClocks(int gpu) override { return ResetClocks(ClockKind::kMemory, gpu); }

  Result<PowerLimitsMw> PowerLimits(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    unsigned default_mw = 0, min_mw = 0, max_mw = 0;
    if (Status s = Call(F().nvmlDeviceGetPowerManagementDefaultLimit, "nvmlDeviceGetPowerManagementDefaultLimit", gpu,
                        "", *device, &default_mw);
        !s.ok()) {
      return s.error();
    }
    if (Status s = Call(F().nvmlDeviceGetPowerManagementLimitConstraints,
                        "nvmlDeviceGetPowerManagementLimitConstraints", gpu, "", *device, &min_mw, &max_mw);
        !s.ok()) {
      return s.error();
    }
    return PowerLimitsMw{.default_mw = default_mw, .min_mw = min_mw, .max_mw = max_mw};
  }

  Result<int64_t> PowerLimitMw(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    unsigned limit_mw = 0;
    if (Status s = Call(F().nvmlDeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit", gpu, "", *device,
                        &limit_mw);
        !s.ok()) {
      return s.error();
    }
    return static_cast<int64_t>(limit_mw);
  }

  Status SetPowerLimitMw(int gpu, int64_t limit_mw) override {
    if (limit_mw <= 0 || limit_mw > 0xFFFFFFFFLL) {
      return Error{"cannot set GPU " + std::to_string(gpu) + " power limit to " + std::to_string(limit_mw) +
                   " mW: out of range"};
    }
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    return Call(F().nvmlDeviceSetPowerManagementLimit, "nvmlDeviceSetPowerManagementLimit", gpu,
                std::to_string(limit_mw) + " mW", *device, static_cast<unsigned>(limit_mw));
  }

  Result<int64_t> PowerUsageMw(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    unsigned power_mw = 0;
    if (Status s = Call(F().nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage", gpu, "", *device, &power_mw); !s.ok()) {
      return s.error();
    }
    return static_cast<int64_t>(power_mw);
  }

  Result<PowerFieldsMw> PowerFields(int gpu) override {
    if (F().nvmlDeviceGetFieldValues == nullptr) {
      return Error::NotFound("this driver's NVML lacks nvmlDeviceGetFieldValues: no instant or averaged power");
    }
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    nvml::FieldValue fields[2];
    fields[0].field_id = nvml::kFieldPowerInstant;
    fields[1].field_id = nvml::kFieldPowerAverage;
    if (Status s = Call(F().nvmlDeviceGetFieldValues, "nvmlDeviceGetFieldValues", gpu, "POWER_INSTANT,POWER_AVERAGE",
                        *device, 2, fields);
        !s.ok()) {
      return s.error();
    }
    auto milliwatts = [](const nvml::FieldValue& f) -> std::optional<int64_t> {
      if (f.nvml_return != nvml::kSuccess) return std::nullopt;  // this GPU lacks the field
      switch (f.value_type) {
        case 0:
          return static_cast<int64_t>(f.value.d);
        case 1:
          return static_cast<int64_t>(f.value.ui);
        case 2:
          return static_cast<int64_t>(f.value.ul);
        case 3:
          return static_cast<int64_t>(f.value.ull);
        case 4:
          return static_cast<int64_t>(f.value.sll);
        case 5:
          return static_cast<int64_t>(f.value.si);
        case 6:
          return static_cast<int64_t>(f.value.us);
        default:
          return std::nullopt;
      }
    };
    return PowerFieldsMw{milliwatts(fields[0]), milliwatts(fields[1])};
  }

  Result<int64_t> TotalEnergyMj(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    unsigned long long energy_mj = 0;
    if (Status s = Call(F().nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption", gpu, "",
                        *device, &energy_mj);
        !s.ok()) {
      return s.error();
    }
    return static_cast<int64_t>(energy_mj);
  }

  Result<int> SmClockMhz(int gpu) override {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    unsigned clock_mhz = 0;
    if (Status s = Call(F().nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", gpu, "NVML_CLOCK_SM", *device,
                        static_cast<int>(nvml::kClockSm), &clock_mhz);
        !s.ok()) {
      return s.error();
    }
    return static_cast<int>(clock_mhz);
  }

 private:
  const nvml::Functions& F() const { return lib_->fn(); }

  // NVML's lock and reset of one kind of clock.
  struct ClockCalls {
    int (*lock)(nvml::Device, unsigned, unsigned);
    const char* lock_name;
    int (*reset)(nvml::Device);
    const char* reset_name;
  };
  ClockCalls CallsOf(ClockKind kind) const {
    if (kind == ClockKind::kSm) {
      return {F().nvmlDeviceSetGpuLockedClocks, "nvmlDeviceSetGpuLockedClocks", F().nvmlDeviceResetGpuLockedClocks,
              "nvmlDeviceResetGpuLockedClocks"};
    }
    return {F().nvmlDeviceSetMemoryLockedClocks, "nvmlDeviceSetMemoryLockedClocks",
            F().nvmlDeviceResetMemoryLockedClocks, "nvmlDeviceResetMemoryLockedClocks"};
  }

  Status LockClocks(ClockKind kind, int gpu, int min_mhz, int max_mhz) {
    if (min_mhz <= 0 || max_mhz < min_mhz) {
      return Error{"cannot lock GPU " + std::to_string(gpu) + " " + std::string(ClockKindName(kind)) + " clocks to " +
                   std::to_string(min_mhz) + "-" + std::to_string(max_mhz) + " MHz: bad range"};
    }
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    const ClockCalls calls = CallsOf(kind);
    return Call(calls.lock, calls.lock_name, gpu, std::to_string(min_mhz) + ", " + std::to_string(max_mhz), *device,
                static_cast<unsigned>(min_mhz), static_cast<unsigned>(max_mhz));
  }

  Status ResetClocks(ClockKind kind, int gpu) {
    auto device = Handle(gpu);
    if (!device.ok()) return device.error();
    const ClockCalls calls = CallsOf(kind);
    return Call(calls.reset, calls.reset_name, gpu, "", *device);
  }

  // Calls `fn(args...)` after checking the symbol exists; turns a failure into an Error.
  template <typename Fn, typename... Args>
  Status Call(Fn fn, const char* fn_name, int gpu, const std::string& shown_args, Args... args) {
    if (Status s = lib_->Require(reinterpret_cast<const void*>(fn), fn_name); !s.ok()) return s;
    const int rc = fn(args...);
    if (rc != nvml::kSuccess) return lib_->MakeError(GpuCall(fn_name, gpu, shown_args), rc);
    return Status::Ok();
  }

  Result<nvml::Device> Handle(int gpu) {
    if (Status s = CheckGpuIndex(gpu, count_); !s.ok()) return s.error();
    nvml::Device& handle = handles_[static_cast<size_t>(gpu)];
    if (handle == nullptr) {
      if (Status s = Call(F().nvmlDeviceGetHandleByIndex_v2, "nvmlDeviceGetHandleByIndex_v2", gpu, "",
                          static_cast<unsigned>(gpu), &handle);
          !s.ok()) {
        handle = nullptr;
        return s.error();
      }
    }
    return handle;
  }

  // NVML's two-call list protocol: a buffer that is too small gives INSUFFICIENT_SIZE and the
  // needed count.
  template <typename Fn, typename Read>
  Result<std::vector<int>> ReadClockList(Fn fn, const char* fn_name, int gpu, const std::string& shown_args,
                                         Read read) {
    if (Status s = lib_->Require(reinterpret_cast<const void*>(fn), fn_name); !s.ok()) return s.error();
    std::vector<unsigned> clocks(32);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned count = static_cast<unsigned>(clocks.size());
      const int rc = read(&count, clocks.data());
      if (rc == nvml::kErrorInsufficientSize && count > clocks.size()) {
        clocks.resize(count);
        continue;
      }
      if (rc != nvml::kSuccess) return lib_->MakeError(GpuCall(fn_name, gpu, shown_args), rc);
      std::vector<int> out(clocks.begin(), clocks.begin() + std::min<size_t>(count, clocks.size()));
      std::sort(out.begin(), out.end(), std::greater<>());
      return out;
    }
    return Error{GpuCall(fn_name, gpu, shown_args) + ": the clock list kept growing"};
  }

  std::unique_ptr<nvml::NvmlLibrary> lib_;
  std::vector<nvml::Device> handles_;
  int count_;
};

}  // namespace

Result<std::unique_ptr<GpuBackend>> OpenNvmlBackend(const std::string& library_name) {
  auto lib = nvml::NvmlLibrary::Open(library_name);
  if (!lib.ok()) return lib.error();
  const nvml::Functions& f = (*lib)->fn();
  if (Status s = (*lib)->Require(reinterpret_cast<const void*>(f.nvmlDeviceGetCount_v2), "nvmlDeviceGetCount_v2");
      !s.ok()) {
    return s.error();
  }
  unsigned count = 0;
  if (int rc = f.nvmlDeviceGetCount_v2(&count); rc != nvml::kSuccess) {
    return (*lib)->MakeError("nvmlDeviceGetCount_v2()", rc);
  }
  if (count == 0) {
    return Error{"NVML (" + library_name +
                 ") sees no GPU: check nvidia-smi, and in a container that "
                 "the GPUs are passed through (--gpus all)"};
  }
  return std::unique_ptr<GpuBackend>(new NvmlBackend(std::move(lib).value(), static_cast<int>(count)));
}

}  // namespace wattcut
