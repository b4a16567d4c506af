// Asynchronous SM-frequency setting for a training rank: SetFrequency() only records the request
// in shared memory (two atomic operations, no system call), so the training thread never waits
// on NVML or on the scheduler. The worker looks for a new request every poll interval (0.5 ms by
// default: a frequency lands at most that late, and NVML's own lock takes milliseconds); with a
// zero interval it sleeps until woken instead, which costs the training thread a system call. The worker applies only
// the latest request (a one-slot queue: a newer request replaces an older unapplied one), skips a frequency equal to
// the applied one, locks the memory clock to its maximum at start, and resets the SM and memory clocks when it stops.
//
// Two workers:
//   * ThreadFrequencySetter: a thread of this process, over any backend (the simulated one too).
//     Resets on Stop() / destruction, not if the process is killed.
//   * WatchdogFrequencySetter: a separate process (the wattcut-freq-setter executable) that opens
//     its own NVML. It resets the clocks when told to stop, on SIGTERM/SIGHUP, and when the
//     training process dies in any way, SIGKILL included (its end of a pipe sees EOF).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"

namespace wattcut {

struct FrequencySetterStats {
  uint64_t requested = 0;  // SetFrequency calls that reached the worker
  uint64_t applied = 0;    // clock locks done
  uint64_t skipped = 0;    // wake-ups whose latest request equalled the applied frequency
  uint64_t failed = 0;     // locks that failed (see last_error)
  int applied_mhz = 0;     // 0: none yet
  std::string last_error;
};

class FrequencySetter {
 public:
  virtual ~FrequencySetter() = default;
  // Non-blocking; callable from one (the training) thread. A repeat of the previous request returns at once.
  virtual void SetFrequency(int freq_mhz) = 0;
  // Blocks until the latest request has been handled; its error if locking it failed. For the
  // profiler, which must know the clock before it measures; training never calls it.
  virtual Status WaitUntilApplied() = 0;
  // Resets SM and memory clocks and stops the worker; the error of the reset, if any. Idempotent.
  virtual Status Stop() = 0;
  virtual FrequencySetterStats stats() const = 0;
};

inline constexpr double kDefaultSetterPollIntervalS = 0.0005;

// A worker thread over `backend` (which must outlive the setter) for GPU `gpu`. Fails when the
// memory clock cannot be locked to its maximum and `require_memory_lock` is set; otherwise that
// problem is only reported in stats().last_error.
Result<std::unique_ptr<FrequencySetter>> StartThreadFrequencySetter(
    GpuBackend& backend, int gpu, bool require_memory_lock = false,
    double poll_interval_s = kDefaultSetterPollIntervalS);

struct WatchdogOptions {
  int gpu = 0;
  std::string nvml_library = {};  // empty: libnvidia-ml.so.1
  bool dry_run = false;           // the watchdog's setters only log (to its stderr)
  std::string helper_path = {};   // empty: $WATTCUT_FREQ_SETTER, else beside this executable, else the build tree's
  bool require_memory_lock = false;
  double poll_interval_s = kDefaultSetterPollIntervalS;  // 0: woken per request (a system call)
};

// Starts the watchdog process and waits until it has opened NVML and locked the memory clock.
Result<std::unique_ptr<FrequencySetter>> StartWatchdogFrequencySetter(const WatchdogOptions& options);

// For tests: the pid of a watchdog setter's process (0 for other setters).
int WatchdogPid(const FrequencySetter& setter);

}  // namespace wattcut
