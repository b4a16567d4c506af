// Tests only: a child process of the test (a `wattcut serve`, a `wattcut agent`, a client run as
// another user) started with its output on a pipe, read until the line that says it is ready.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace wattcut::testing {

struct ChildProcess {
  pid_t pid = -1;          // -1: it ended before printing the marker
  std::string ready_line;  // the first line holding the marker
  std::string output;      // what it printed before that line (all of it when it ended)
  int exit_status = -1;    // when it ended before the marker: its status (128 + signal when killed)
};

// Forks; the child runs `in_child` (set limits, drop privileges: it must not allocate), puts
// stdout and stderr on a pipe and execs `args` with `environment` ("NAME=value") added. Returns
// once a line holding `marker` was read, or the child closed its output (then it is reaped).
// Later output is drained by a thread, so the child never blocks on a full pipe.
ChildProcess StartChild(const std::vector<std::string>& args, const std::string& marker,
                        const std::vector<std::string>& environment = {},
                        const std::function<void()>& in_child = nullptr);

// SIGKILL (or `signal`), then reap; the exit status (128 + signal when killed).
int StopChild(pid_t pid, int signal);

}  // namespace wattcut::testing
