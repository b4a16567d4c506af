#include "wattcut/cli/stop_signals.h"

#include <pthread.h>

namespace wattcut::cli {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

void StopSignals::OnStop(std::function<void()> stop) {
  waiter_ = std::thread([signals = signals_, stop = std::move(stop)] {
    int sig = 0;
    sigwait(&signals, &sig);
    // Finish() ends the wait with a SIGTERM too, so `stop` may run after the service stopped on
    // its own: the services' Stop functions are idempotent.
    if (sig != 0) stop();
  });
}

void StopSignals::Finish() {
  if (!waiter_.joinable()) return;
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

}  // namespace wattcut::cli
