// One GPU of the node, owned: what it is (GpuDescription, read once at start-up), what is asked of
// it (the training side's SM and memory locks and power limit, set under a lease; the row side's
// ceiling) and what NVML was told. Every change goes through one path, as a server Job's Commit
// does: checked against what the GPU supports, applied to the GPU, then recorded; a change NVML
// refuses is not recorded (an SM lock is: the next change tries again, see ApplySm).
//
// What a lease holder set (the SM lock, the memory lock, the power limit) is its part of the GPU,
// and UndoHolder puts it back when the lease ends; the ceiling is the row's and stays.
//
// Not thread-safe: the node agent (node_agent.h) owns its GpuOwners under its one lock, and hands
// each call the node's backend, which it may touch only under that lock.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/agent/clock_composition.h"
#include "wattcut/agent/lease_table.h"
#include "wattcut/base/result.h"
#include "wattcut/gpu/clock_kind.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut::agent {

struct GpuDescription {
  int index = 0;
  std::string uuid;
  std::string name;
  std::string pci_address;             // "" when the backend does not know it
  std::vector<int> sm_clocks_mhz;      // at the highest memory clock, highest first
  std::vector<int> memory_clocks_mhz;  // highest first
  std::optional<PowerLimitsMw> power_limits;
  bool energy_counter = false;
};

// One GPU's readings; a value that could not be read is empty and its error is in `errors`
// (field -> message, with NVML's error name).
struct GpuReading {
  int index = 0;
  std::optional<double> power_w;  // nvmlDeviceGetPowerUsage: a 1 s average on recent GPUs
  // NVML's power fields, where the driver and the GPU keep them (GpuBackend::PowerFields).
  std::optional<double> power_instant_w;
  std::optional<double> power_average_w;
  std::optional<int64_t> energy_mj;
  std::optional<int> sm_clock_mhz;
  std::optional<double> power_limit_w;
  std::vector<std::pair<std::string, std::string>> errors;
};

struct Ceiling {
  int mhz = 0;
  std::string reason;
  double expires_at_unix_s = 0;
};

// What the agent holds for one GPU (the view answers show).
struct GpuControl {
  int index = 0;
  std::optional<Lease> lease;             // filled in by the node agent, which owns the leases
  std::optional<ClockRange> sm_lock;      // the training side's
  std::optional<Ceiling> ceiling;         // the row side's
  std::optional<ClockRange> sm_applied;   // what NVML was told (nullopt: reset)
  bool sm_applied_known = true;           // false after a failed NVML call
  std::optional<ClockRange> memory_lock;  // the lease holder's
  std::optional<int64_t> power_limit_mw;  // set by the lease holder; nullopt: the default
};

// Reads what GpuDescription holds of GPU `gpu` from `backend` (a GPU without supported SM clocks
// is an error: the agent could not check a lock on it).
Result<GpuDescription> DescribeGpu(GpuBackend& backend, int gpu);

// The driver library's error name out of a backend's message: "NVML_ERROR_NO_PERMISSION" (NVML),
// "RSMI_STATUS_PERMISSION" (ROCm SMI); "other" when there is none.
std::string DriverErrorName(const std::string& message);

class GpuOwner {
 public:
  // `on_device_error` is told the driver library's error name (DriverErrorName) of each change it refused.
  GpuOwner(GpuDescription description, std::function<void(const std::string&)> on_device_error);

  int index() const { return description_.index; }
  // What is held, without the lease (the node agent's).
  const GpuControl& control() const { return control_; }

  // At the agent's start: the memory clocks reset, the power limit put back when a previous run
  // changed it (`power_limit_was_changed`), the SM clocks reset, then a stored ceiling that has
  // not run out applied. The problems met, one line each ("GPU 0: cannot ...").
  std::vector<std::string> Start(GpuBackend& backend, const std::optional<Ceiling>& stored_ceiling,
                                 bool power_limit_was_changed);

  GpuReading Read(GpuBackend& backend, bool power_only) const;

  // The training side. A lock of `kind` must be supported clocks of that kind (min <= max);
  // nullopt lifts it. The SM lock is composed with the ceiling (ComposeSmClocks).
  Status SetClockLock(GpuBackend& backend, ClockKind kind, std::optional<ClockRange> range);
  Status SetPowerLimit(GpuBackend& backend, double watts);
  Status ResetPowerLimit(GpuBackend& backend);

  // The row side: a ceiling rounded down to a supported SM clock, until `expires_at_unix_s`.
  Status SetCeiling(GpuBackend& backend, int mhz, double expires_at_unix_s, const std::string& reason);
  Status ClearCeiling(GpuBackend& backend);
  // The ceiling lifted when it has run out by `now_unix_s`: the ceiling that was, and whether
  // applying the clocks without it worked; nullopt when there was nothing to lift.
  struct LiftedCeiling {
    Ceiling ceiling;
    Status applied;
  };
  std::optional<LiftedCeiling> LiftCeilingIfExpired(GpuBackend& backend, double now_unix_s);

  // What a lease holder set, undone: the SM lock lifted (the ceiling, if any, applied), the memory
  // clocks and power limit back to their defaults; with `force` (a job's end: anything may have
  // been left), told to NVML whether or not the agent set them. Problems, one line each.
  std::vector<std::string> UndoHolder(GpuBackend& backend, bool force);

 private:
  // Applies the composition of the SM lock and the ceiling, unless NVML already holds it.
  Status ApplySm(GpuBackend& backend);
  Status CheckClockRange(ClockKind kind, ClockRange range) const;
  Error DeviceError(const Error& error) const;
  std::string Who() const;

  GpuDescription description_;
  GpuControl control_;
  std::function<void(const std::string&)> on_device_error_;
};

}  // namespace wattcut::agent
