// How the commands that serve (serve, agent) stop cleanly on SIGINT and SIGTERM: the signals are
// blocked before any thread starts (threads inherit the mask) and waited for on one thread, which
// runs `stop` once (which must be idempotent); Finish() ends the wait when the service stopped
// on its own.
#pragma once

#include <signal.h>

#include <functional>
#include <thread>

namespace wattcut::cli {

class StopSignals {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread (call before starting threads).
  StopSignals();
  // Starts the thread that waits for one and then runs `stop`.
  void OnStop(std::function<void()> stop);
  // Unblocks the waiting thread (if no signal came) and joins it.
  void Finish();
  ~StopSignals() { Finish(); }

 private:
  sigset_t signals_;
  std::thread waiter_;
};

}  // namespace wattcut::cli
