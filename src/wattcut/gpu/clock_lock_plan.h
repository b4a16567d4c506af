// A clock lock over one or more GPUs (what `wattcut gpu lock` does): planned first, checking every
// argument against every GPU while changing nothing; then applied step by step; and when a step
// still fails, the steps already applied are undone, newest first, so a failed lock leaves the
// GPUs as they were (or says exactly what it could not undo).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut {

// What to lock on every GPU the lock covers.
struct ClockLockRequest {
  int sm_min_mhz = 0;                   // lock the SM clock to sm_min_mhz..sm_max_mhz; 0: leave the SM clock
  int sm_max_mhz = 0;                   // >= sm_min_mhz when the SM clock is locked, else 0
  bool memory_max = false;              // lock the memory clock to its maximum
  std::optional<double> power_limit_w;  // set the power limit (a positive number of watts below 1e6)
};

// What the lock sets on one GPU, read from that GPU while planning.
struct ClockLockPlan {
  int gpu = 0;
  int sm_min_mhz = 0;  // 0: the SM clock is left as it is
  int sm_max_mhz = 0;
  std::optional<int> memory_mhz;          // the GPU's highest memory clock, with memory_max
  std::optional<int64_t> power_limit_mw;  // the limit to set
  int64_t previous_power_limit_mw = 0;    // with a power limit: what undoing it restores
};

// Checks the request (messages name its fields), then every part of it against every GPU in
// `gpus`: the SM range against the supported SM clocks, that the memory clocks can be read, the
// power limit against the GPU's allowed range (and that the limit now can be read, to undo it).
// Changes nothing. One plan per GPU, or every problem found, joined, ending "(nothing was changed)".
Result<std::vector<ClockLockPlan>> PlanClockLock(GpuBackend& backend, const std::vector<int>& gpus,
                                                 const ClockLockRequest& request);

// One change a lock made, and what undoing it needs.
struct ClockLockChange {
  enum Kind { kSmClocks, kMemoryClocks, kPowerLimit };
  Kind kind = kSmClocks;
  int gpu = 0;
  // kSmClocks: the range locked, and the SM clock read before and after (absent: the reading failed).
  int sm_min_mhz = 0;
  int sm_max_mhz = 0;
  std::optional<int> sm_clock_before_mhz;
  std::optional<int> sm_clock_after_mhz;
  int memory_mhz = 0;                   // kMemoryClocks: the clock locked
  int64_t power_limit_mw = 0;           // kPowerLimit: the limit set
  int64_t previous_power_limit_mw = 0;  // kPowerLimit: the limit undoing it restores
};

// Applies the plans in order (per GPU: SM clocks, memory clock, power limit), calling `on_change`
// after each change. When a step fails, undoes the changes made so far (RollBackClockLock) and
// returns the step's error followed by "; " and what the rollback did.
Status ApplyClockLock(GpuBackend& backend, const std::vector<ClockLockPlan>& plans,
                      const std::function<void(const ClockLockChange&)>& on_change);

// Undoes `applied` newest first: resets SM and memory clocks, restores the previous power limit.
// Says what was undone ("rolled back: GPU 0 power limit restored to 350.0 W, GPU 0 SM clocks
// reset"), what could not be and why, or "nothing had been changed".
std::string RollBackClockLock(GpuBackend& backend, const std::vector<ClockLockChange>& applied);

}  // namespace wattcut
