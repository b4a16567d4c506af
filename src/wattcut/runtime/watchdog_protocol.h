// What the training process and its frequency watchdog (wattcut-freq-setter) share, and the rules
// both sides follow: the helper's command line, a page of memory (a memfd, fd 3 in the watchdog),
// a wake-up socket (one end of a stream socket pair, fd 4) and a one-shot ready pipe (write end
// fd 5). The parent side is watchdog_frequency_setter.cc, the child side watchdog_child.h.
// Internal to runtime/.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

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
  std::atomic<int32_t> reset_ok;  // 1 after a successful reset on exit, -1 after a failed one
  char reset_error[kErrorSize];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

// ---- The command line (argv after the program name) ----

struct HelperArguments {
  int gpu = 0;
  std::string nvml_library = {};  // empty: not passed, the watchdog opens libnvidia-ml.so.1
  bool dry_run = false;
  bool require_memory_lock = false;
  long poll_interval_us = 0;  // 0: the watchdog sleeps until woken
};

// --gpu N [--nvml-library PATH] [--dry-run] [--require-memory-lock] --poll-interval-us N
std::vector<std::string> HelperCommandLine(const HelperArguments& arguments);
// Reads argv[1..argc-1] as HelperCommandLine writes it (flags in any order, each optional); an
// unknown argument, or a flag without its value, is an error naming it.
Result<HelperArguments> ParseHelperCommandLine(int argc, char** argv);

// ---- The ready pipe: one reply, then the watchdog closes it ----

// "ok" once the watchdog serves requests, "error: MESSAGE" when it cannot start.
std::string ReadyReply(const Status& started);
// What a reply means to the training process: Ok for "ok", the message of "error: MESSAGE";
// nullopt for anything else (the watchdog ended without answering).
std::optional<Status> ParseReadyReply(const std::string& reply);

// ---- The shared page ----

// The training process's side of a request: the frequency, then a new sequence number (seq_cst:
// ordered before the look at worker_sleeping). True when the watchdog had announced that it
// sleeps: only then does it need a wake-up byte on the socket (and the training process a system
// call); a busy watchdog reads the latest request when it next looks.
inline bool PostRequest(Shared& shared, int freq_mhz) {
  shared.requested_mhz.store(freq_mhz, std::memory_order_relaxed);
  shared.request_seq.fetch_add(1);
  return shared.worker_sleeping.exchange(0) != 0;
}

// `message` into a kErrorSize buffer, cut to fit and NUL-terminated (last_error, reset_error).
void CopyErrorText(char* out, const std::string& message);
// last_error under its sequence counter (the watchdog writes, the training process reads).
void WriteLastError(Shared& shared, const std::string& message);
std::string ReadLastError(const Shared& shared);

}  // namespace wattcut::watchdog
