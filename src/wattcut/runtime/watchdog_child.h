// The frequency watchdog's side of watchdog_protocol.h: the privileged helper process
// (wattcut-freq-setter) that holds the GPU backend, applies the SM clock the training process
// requests through the shared page, and resets the SM and memory clocks when it stops: when the
// wake-up socket reaches EOF (the training process stopped it, or died), on SIGTERM/SIGHUP, and
// when the training process exits in any other way. Internal to runtime/.
//
// The phases of WatchdogChild are those of the process: Start (check the GPU, lock the memory
// clock), then the ready reply (RunWatchdog's), Serve until told to stop, ResetClocks.
#pragma once

#include <sys/types.h>

#include "wattcut/base/result.h"
#include "wattcut/gpu/gpu_backend.h"
#include "wattcut/runtime/watchdog_protocol.h"

namespace wattcut::watchdog {

// What Serve waits on, and how it learns that it must stop.
struct ChildWakeups {
  int wake_fd = -1;         // the wake-up socket: bytes wake the loop, EOF stops it
  int stop_fd = -1;         // readable: stop (the signalfd of SIGTERM and SIGHUP); -1: none
  pid_t parent = 0;         // the training process: the loop stops once getppid() differs
  int parent_exit_fd = -1;  // readable once the parent exits (its pidfd); -1: none, and the loop
                            // looks at getppid() every 200 ms at least
};

class WatchdogChild {
 public:
  // `backend` and `shared` must outlive the child.
  WatchdogChild(GpuBackend& backend, int gpu, Shared& shared) : backend_(backend), gpu_(gpu), shared_(shared) {}

  // Checks that the GPU exists and locks its memory clock to the maximum. A memory clock that
  // cannot be locked is an error only with `require_memory_lock`; otherwise it is left in the
  // shared page's last_error ("memory clock not locked: ...").
  Status Start(bool require_memory_lock);

  // Handles requests until a stop (see ChildWakeups): applies the latest requested frequency,
  // skips one equal to the applied frequency or not positive, counts each case in the shared
  // page, records a failed lock's message in last_error, and marks the request handled. With
  // poll_interval_us > 0 it looks for a request every interval; otherwise it announces that it
  // sleeps (worker_sleeping) and waits to be woken.
  void Serve(const ChildWakeups& wakeups, long poll_interval_us);

  // Resets the SM and memory clocks and reports the outcome in the shared page (applied_mhz 0,
  // reset_ok, reset_error); the first failure, if any.
  Status ResetClocks();

 private:
  GpuBackend& backend_;
  const int gpu_;
  Shared& shared_;
  int applied_mhz_ = 0;  // 0: none yet
};

// The helper process: reads its command line (HelperCommandLine), sets itself up (SCHED_BATCH;
// SIGINT and SIGPIPE ignored; SIGTERM and SIGHUP through a signalfd), maps the shared page, opens
// NVML (or a dry run of it), starts, answers on the ready pipe, serves and resets. Its exit
// status: 0 after a clean reset, 1 when it cannot start or reset, 2 when not started by wattcut.
int RunWatchdog(int argc, char** argv);

}  // namespace wattcut::watchdog
