// A read-only check of a GPU backend, with a verdict: discovery, each GPU's identity and supported
// clocks, power readings and the energy counter over a sampling window (do they agree?), and every
// setter exercised through a DryRunBackend, so no GPU setting is ever changed whatever the backend.
// What `wattcut gpu check` and scripts/check_nvml_gpu.sh report on a machine with real GPUs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/clock.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/gpu/open_backend.h"

namespace wattcut {

enum class CheckOutcome {
  kPass,
  kWarn,    // works, but something looks off (the verdict can still pass)
  kFail,    // does not work (the verdict fails)
  kDryRun,  // what a setter would have done, from the dry-run backend's log
};

// "PASS", "WARN", "FAIL", "DRY".
std::string_view CheckOutcomeName(CheckOutcome outcome);

struct CheckResult {
  std::string name;  // what was checked: "open", "gpus", "discovery", "identity", "supported clocks",
                     // "energy counter", "power", "energy vs power", "setter"
  int gpu = -1;      // the GPU it is about; -1: the backend as a whole
  CheckOutcome outcome = CheckOutcome::kPass;
  std::string detail;  // what was found, ready to show (without the GPU)
};

enum class CheckVerdict {
  kPass,   // every check passed (warnings allowed)
  kFail,   // a check failed, or the backend does not open
  kNoGpu,  // the backend does not open because the machine has no usable GPU or driver
};

struct BackendCheckReport {
  std::vector<CheckResult> results;  // in the order they were found
  CheckVerdict verdict = CheckVerdict::kFail;
  // The verdict in words: "PASS with 1 warning(s): the nvml backend discovers, ...", "FAIL: 2 check(s)
  // failed (no GPU setting was changed)", "NO GPU: ...".
  std::string summary;

  int Count(CheckOutcome outcome) const;
};

struct BackendCheckOptions {
  int gpu = -1;                    // the GPU to check; -1: every GPU
  double duration_s = 5.0;         // power and energy sampling window, per GPU
  double sample_interval_s = 0.1;  // between power readings
  // Called with each result as soon as it is found (a check of several GPUs takes a while).
  std::function<void(const CheckResult&)> on_result;
};

// Whether a backend that does not open says there is no usable GPU or driver on this machine
// (NVML or ROCm SMI cannot be loaded, sees no GPU, or the kernel driver is not loaded), not that it
// is broken.
bool MeansNoGpu(const Error& open_error);

// Checks `backend` (wrapped here in a DryRunBackend: its setters are only logged), timing the
// sampling window on `clock`. Bad options (a negative duration, a non-positive interval) are a
// FAIL result and verdict.
BackendCheckReport CheckGpuBackend(std::unique_ptr<GpuBackend> backend, Clock& clock,
                                   const BackendCheckOptions& options);

// Opens the backend `open` names, never as a dry run (the check wraps it itself), and checks it;
// one that does not open is a FAIL result, with a NO GPU verdict where MeansNoGpu.
BackendCheckReport CheckGpuBackend(const BackendOptions& open, Clock& clock, const BackendCheckOptions& options);

}  // namespace wattcut
