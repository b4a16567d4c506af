// What the training process and its frequency watchdog (wattcut-freq-setter) share: a page of
// memory (a memfd, fd 3 in the watchdog), a wake-up socket (one end of a stream socket pair,
// fd 4) and a one-shot ready pipe (write end fd 5). Internal to runtime/.
#pragma once

#include <atomic>
#include <cstdint>

namespace wattcut::watchdog {

inline constexpr int kSharedFd = 3;
inline constexpr int kWakeFd = 4;
inline constexpr int kReadyFd = 5;
inline constexpr int kErrorSize = 1024;

struct Shared {
  // Written by the training process.
  std::atomic<int32_t> requested_mhz;
  std::atomic<uint64_t> request_seq;
  // Written by the watchdog (worker_sleeping also cleared by the training process when it wakes it).
  std::atomic<int32_t> worker_sleeping;
  std::atomic<uint64_t> handled_seq;
  std::atomic<int32_t> applied_mhz;
  std::atomic<int32_t> last_ok;
  std::atomic<uint64_t> requested, applied, skipped, failed;
  std::atomic<uint32_t> error_seq;  // odd while last_error is being written
  char last_error[kErrorSize];
  std::atomic<int32_t> reset_ok;     // 1 after a successful reset on exit, -1 after a failed one
  char reset_error[kErrorSize];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

// The watchdog's main loop (argv: --gpu N [--nvml-library PATH] [--dry-run] [--require-memory-lock]
// [--poll-interval-us N]).
int RunWatchdog(int argc, char** argv);

}  // namespace wattcut::watchdog
