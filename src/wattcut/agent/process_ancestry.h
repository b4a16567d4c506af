// Which process started which: the parent of a pid from /proc/PID/stat, and whether one process
// descends from another. The agent lets a child act under a lease its parent took implicitly through
// zeusd's API (Zeus's frequency controller sets clocks from a process it forks).
#pragma once

#include <optional>
#include <string>

namespace wattcut::agent {

// The parent pid of `pid`; nullopt when the process is gone or /proc cannot be read. `proc_root`
// is "/proc" but for tests.
std::optional<int> ParentPid(int pid, const std::string& proc_root = "/proc");

// Whether `ancestor` is `pid`'s parent, grandparent, ... (at most 256 generations; pid 1 and 0 end
// the walk and are nobody's ancestor here).
bool DescendsFrom(int pid, int ancestor, const std::string& proc_root = "/proc");

}  // namespace wattcut::agent
