// Runs a program with bounded resources, as the bad-input corpus needs: address space
// and CPU time capped with setrlimit in the child, no shell between the test and the
// program, stdout and stderr captured. A process that dies of a signal (SIGSEGV,
// SIGABRT, SIGKILL for memory, SIGXCPU for CPU) is reported as such, never as an exit
// code.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace wattcut::testing {

struct ResourceBounds {
  uint64_t address_space_bytes = uint64_t{2} << 30;  // RLIMIT_AS
  uint64_t cpu_seconds = 120;                        // RLIMIT_CPU: a busy loop ends in SIGXCPU
};

struct BoundedResult {
  int exit_code = -1;  // -1 unless the process exited
  int signal = 0;      // the signal that ended it, 0 if it exited
  std::string out;
  std::string err;
  std::string Describe() const;  // "exit 1" or "signal 11 (Segmentation fault)"
};

// Runs `argv` (argv[0] is the program's path) with `bounds`, stdin from /dev/null,
// and waits for it.
BoundedResult RunBounded(const std::vector<std::string>& argv, const ResourceBounds& bounds);

// A process started with `bounds` whose output goes to `output_path`, for servers:
// the caller talks to it, then stops it.
class BoundedChild {
 public:
  BoundedChild(const std::vector<std::string>& argv, const ResourceBounds& bounds, const std::string& output_path);
  ~BoundedChild();
  BoundedChild(const BoundedChild&) = delete;
  BoundedChild& operator=(const BoundedChild&) = delete;

  pid_t pid() const { return pid_; }
  // True while the process has not ended (reaps it if it has).
  bool Alive();
  // The signal that ended it (0 if it exited or still runs).
  int end_signal() const { return end_signal_; }
  // SIGTERM, wait; returns the exit status as Describe() would word it.
  std::string Stop();

 private:
  void Reap(int status);
  pid_t pid_ = -1;
  int end_signal_ = 0;
  int exit_code_ = -1;
};

}  // namespace wattcut::testing
