#include "wattcut/agent/gpu_owner.h"

#include <algorithm>
#include <cmath>

namespace wattcut::agent {

Result<GpuDescription> DescribeGpu(GpuBackend& backend, int gpu) {
  const std::string who = "GPU " + std::to_string(gpu) + ": ";
  GpuDescription d;
  d.index = gpu;
  auto info = backend.Info(gpu);
  if (!info.ok()) return info.error().WithContext(who);
  d.uuid = info->uuid;
  d.pci_address = info->pci_address;
  d.name = info->name;
  auto memory = backend.SupportedMemoryClocksMhz(gpu);
  if (!memory.ok()) return memory.error().WithContext(who);
  d.memory_clocks_mhz = *memory;
  auto sm = SupportedSmClocksMhz(backend, gpu);
  if (!sm.ok()) return sm.error().WithContext(who);
  if (sm->empty()) return Error{"GPU " + std::to_string(gpu) + " reports no supported SM clocks"};
  d.sm_clocks_mhz = *sm;
  auto limits = backend.PowerLimits(gpu);
  if (limits.ok()) d.power_limits = *limits;
  d.energy_counter = backend.TotalEnergyMj(gpu).ok();
  return d;
}

std::string DriverErrorName(const std::string& message) {
  size_t at = message.find("NVML_ERROR_");
  if (at == std::string::npos) at = message.find("RSMI_STATUS_");
  if (at == std::string::npos) return "other";
  size_t end = at;
  while (end < message.size() && ((message[end] >= 'A' && message[end] <= 'Z') || message[end] == '_')) ++end;
  return message.substr(at, end - at);
}

GpuOwner::GpuOwner(GpuDescription description, std::function<void(const std::string&)> on_device_error)
    : description_(std::move(description)), on_device_error_(std::move(on_device_error)) {
  control_.index = description_.index;
}

std::string GpuOwner::Who() const { return "GPU " + std::to_string(index()) + ": "; }

Error GpuOwner::DeviceError(const Error& error) const {
  if (on_device_error_) on_device_error_(DriverErrorName(error.message));
  return Error::DeviceError(error.message);
}

std::vector<std::string> GpuOwner::Start(GpuBackend& backend, const std::optional<Ceiling>& stored_ceiling,
                                         bool power_limit_was_changed) {
  std::vector<std::string> problems;
  const int gpu = index();
  control_.ceiling = stored_ceiling;
  if (Status s = backend.ResetMemoryClocks(gpu); !s.ok()) {
    problems.push_back(Who() + "cannot reset the memory clocks: " + s.error().message);
  }
  if (power_limit_was_changed) {
    if (Status s = wattcut::ResetPowerLimit(backend, gpu); !s.ok()) {
      problems.push_back(Who() + "cannot put the power limit back to its default: " + s.error().message);
    }
  }
  // Reset first, whatever NVML had: a ceiling is then applied on top of a known state.
  if (Status s = backend.ResetGpuClocks(gpu); !s.ok()) {
    problems.push_back(Who() + "cannot reset the SM clocks: " + s.error().message);
    control_.sm_applied_known = false;
  } else {
    control_.sm_applied = std::nullopt;
  }
  if (control_.ceiling) {
    if (Status s = ApplySm(backend); !s.ok()) {
      problems.push_back(Who() + "cannot apply the stored ceiling: " + s.error().message);
    }
  }
  return problems;
}

Status GpuOwner::ApplySm(GpuBackend& backend) {
  const std::optional<int> ceiling = control_.ceiling ? std::optional<int>(control_.ceiling->mhz) : std::nullopt;
  const std::optional<ClockRange> wanted =
      ComposeSmClocks(control_.sm_lock, ceiling, description_.sm_clocks_mhz.back());
  if (control_.sm_applied_known && control_.sm_applied == wanted) return Status::Ok();
  const int gpu = index();
  Status s = wanted ? backend.LockGpuClocks(gpu, wanted->min_mhz, wanted->max_mhz) : backend.ResetGpuClocks(gpu);
  if (!s.ok()) {
    control_.sm_applied_known = false;
    return DeviceError(s.error());
  }
  control_.sm_applied = wanted;
  control_.sm_applied_known = true;
  return Status::Ok();
}

GpuReading GpuOwner::Read(GpuBackend& backend, bool power_only) const {
  const int gpu = index();
  GpuReading r;
  r.index = gpu;
  auto note = [&r](const char* field, const Error& e) { r.errors.emplace_back(field, e.message); };
  if (auto v = backend.PowerUsageMw(gpu); v.ok()) {
    r.power_w = static_cast<double>(*v) / 1000.0;
  } else {
    note("power_w", v.error());
  }
  // A driver or a backend without the power fields is no error: power_w is all it has.
  if (auto v = backend.PowerFields(gpu); v.ok()) {
    if (v->instant_mw) r.power_instant_w = static_cast<double>(*v->instant_mw) / 1000.0;
    if (v->average_mw) r.power_average_w = static_cast<double>(*v->average_mw) / 1000.0;
  } else if (v.error().code != ErrorCode::kNotFound) {
    note("power_instant_w", v.error());
  }
  if (power_only) return r;
  if (auto v = backend.TotalEnergyMj(gpu); v.ok()) {
    r.energy_mj = *v;
  } else {
    note("energy_mj", v.error());
  }
  if (auto v = backend.SmClockMhz(gpu); v.ok()) {
    r.sm_clock_mhz = *v;
  } else {
    note("sm_clock_mhz", v.error());
  }
  if (auto v = backend.PowerLimitMw(gpu); v.ok()) {
    r.power_limit_w = static_cast<double>(*v) / 1000.0;
  } else {
    note("power_limit_w", v.error());
  }
  return r;
}

Status GpuOwner::CheckClockRange(ClockKind kind, ClockRange range) const {
  const bool sm = kind == ClockKind::kSm;
  const std::vector<int>& supported = sm ? description_.sm_clocks_mhz : description_.memory_clocks_mhz;
  for (int mhz : {range.min_mhz, range.max_mhz}) {
    if (std::ranges::count(supported, mhz) == 0) {
      return Error::InvalidArgument("GPU " + std::to_string(index()) + " does not support " + (sm ? "an " : "a ") +
                                    std::string(ClockKindName(kind)) + " clock of " + std::to_string(mhz) +
                                    " MHz (supported: " + wattcut::ClockRangeText(supported) +
                                    (sm ? ", GET /v1/gpus lists them" : "") + ")");
    }
  }
  if (range.min_mhz > range.max_mhz) {
    return Error::InvalidArgument("min_mhz " + std::to_string(range.min_mhz) + " is above max_mhz " +
                                  std::to_string(range.max_mhz));
  }
  return Status::Ok();
}

Status GpuOwner::SetClockLock(GpuBackend& backend, ClockKind kind, std::optional<ClockRange> range) {
  if (range) {
    if (Status s = CheckClockRange(kind, *range); !s.ok()) return s;
  }
  if (kind == ClockKind::kSm) {
    // Kept even when applying fails: the next change (or the ceiling's) tries again.
    control_.sm_lock = range;
    return ApplySm(backend);
  }
  const int gpu = index();
  Status s = range ? backend.LockMemoryClocks(gpu, range->min_mhz, range->max_mhz) : backend.ResetMemoryClocks(gpu);
  if (!s.ok()) return DeviceError(s.error());
  control_.memory_lock = range;
  return Status::Ok();
}

Status GpuOwner::SetPowerLimit(GpuBackend& backend, double watts) {
  const std::optional<PowerLimitsMw>& limits = description_.power_limits;
  const std::string gpu = std::to_string(index());
  if (!limits) return Error::InvalidArgument("GPU " + gpu + " has no settable power limit");
  const int64_t mw = std::llround(watts * 1000.0);
  if (mw < limits->min_mw || mw > limits->max_mw) {
    return Error::InvalidArgument("GPU " + gpu + "'s power limit must be in [" + std::to_string(limits->min_mw / 1000) +
                                  ", " + std::to_string(limits->max_mw / 1000) + "] W");
  }
  if (Status s = backend.SetPowerLimitMw(index(), mw); !s.ok()) return DeviceError(s.error());
  control_.power_limit_mw = mw;
  return Status::Ok();
}

Status GpuOwner::ResetPowerLimit(GpuBackend& backend) {
  if (Status s = wattcut::ResetPowerLimit(backend, index()); !s.ok()) return DeviceError(s.error());
  control_.power_limit_mw.reset();
  return Status::Ok();
}

Status GpuOwner::SetCeiling(GpuBackend& backend, int mhz, double expires_at_unix_s, const std::string& reason) {
  const std::optional<int> supported = SupportedClockAtOrBelow(description_.sm_clocks_mhz, mhz);
  if (!supported) {
    return Error::InvalidArgument("a ceiling of " + std::to_string(mhz) + " MHz is below GPU " +
                                  std::to_string(index()) + "'s lowest supported SM clock (" +
                                  std::to_string(description_.sm_clocks_mhz.back()) + " MHz)");
  }
  control_.ceiling = Ceiling{*supported, reason, expires_at_unix_s};
  return ApplySm(backend);
}

Status GpuOwner::ClearCeiling(GpuBackend& backend) {
  control_.ceiling.reset();
  return ApplySm(backend);
}

std::optional<GpuOwner::LiftedCeiling> GpuOwner::LiftCeilingIfExpired(GpuBackend& backend, double now_unix_s) {
  if (!control_.ceiling || control_.ceiling->expires_at_unix_s > now_unix_s) return std::nullopt;
  LiftedCeiling lifted{*control_.ceiling, Status::Ok()};
  control_.ceiling.reset();
  lifted.applied = ApplySm(backend);
  return lifted;
}

std::vector<std::string> GpuOwner::UndoHolder(GpuBackend& backend, bool force) {
  std::vector<std::string> problems;
  const int gpu = index();
  control_.sm_lock.reset();
  if (force) control_.sm_applied_known = false;  // told to NVML again, whatever the agent believes it holds
  if (Status s = ApplySm(backend); !s.ok()) {
    problems.push_back(Who() + "cannot undo the SM clock lock: " + s.error().message);
  }
  if (control_.memory_lock || force) {
    control_.memory_lock.reset();
    if (Status s = backend.ResetMemoryClocks(gpu); !s.ok()) {
      problems.push_back(Who() + "cannot reset the memory clocks: " + DeviceError(s.error()).message);
    }
  }
  if (control_.power_limit_mw) {
    control_.power_limit_mw.reset();
    if (Status s = wattcut::ResetPowerLimit(backend, gpu); !s.ok()) {
      problems.push_back(Who() + "cannot put the power limit back: " + DeviceError(s.error()).message);
    }
  }
  return problems;
}

}  // namespace wattcut::agent
