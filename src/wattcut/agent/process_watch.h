// Which lease-holding processes are still alive, without polling /proc: a pidfd per watched pid
// (pidfd_open, Linux 5.3) turns readable the moment the process exits, SIGKILL included, and is
// immune to pid reuse. Where pidfd_open is missing (older kernels, some seccomp profiles) the
// process's start time from /proc/PID/stat stands in: a pid whose start time changed is another
// process. Thread-safe.
#pragma once

#include <map>
#include <set>

#include "wattcut/base/mutex.h"
#include "wattcut/base/result.h"

namespace wattcut::agent {

class NodeAgent;

class ProcessWatch {
 public:
  ProcessWatch();
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Starts watching `pid` (again: a no-op). Fails when the process is already gone.
  Status Watch(int pid) EXCLUDES(mu_);
  // Stops watching every pid not in `pids`: what is watched is what holds a lease, so a process
  // that was watched for a lease it never got cannot keep a descriptor (and, once it exits, a
  // readable one that wakes WaitForExit for ever).
  void Retain(const std::set<int>& pids) EXCLUDES(mu_);
  // How many pids are watched.
  size_t size() EXCLUDES(mu_);
  // False once a watched process has exited; true for one that runs (and for a pid not watched).
  bool Alive(int pid) EXCLUDES(mu_);
  // Waits up to `timeout_ms` for a watched process to exit or for Wake(); returns at once when
  // one already has.
  void WaitForExit(int timeout_ms) EXCLUDES(mu_);
  // Ends a WaitForExit early (a new pid to watch, or the agent is stopping).
  void Wake();

 private:
  struct Watched {
    int pidfd = -1;                     // -1: the /proc fallback
    unsigned long long start_time = 0;  // /proc/PID/stat field 22, for the fallback
  };
  // NodeAgent calls Watch, Retain and Alive under its own mutex: NodeAgent::mu_ comes before this
  // one, which is held for no call out of this class. NodeAgent names it in its ACQUIRED_BEFORE.
  friend class NodeAgent;
  Mutex mu_;
  std::map<int, Watched> watched_ GUARDED_BY(mu_);
  int wake_fds_[2] = {-1, -1};  // set in the constructor, then only read
};

}  // namespace wattcut::agent
