#include "wattcut/agent/process_ancestry.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace wattcut::agent {

std::optional<int> ParentPid(int pid, const std::string& proc_root) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so read after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return std::nullopt;
  const size_t ppid_at = stat.find(' ', close + 2);
  if (ppid_at == std::string::npos) return std::nullopt;
  int ppid = -1;
  const char* first = stat.data() + ppid_at + 1;
  auto [end, ec] = std::from_chars(first, stat.data() + stat.size(), ppid);
  if (ec != std::errc() || end == first || ppid < 0) return std::nullopt;
  return ppid;
}

bool DescendsFrom(int pid, int ancestor, const std::string& proc_root) {
  if (ancestor <= 1 || pid <= 1 || pid == ancestor) return false;
  int at = pid;
  for (int generation = 0; generation < 256; ++generation) {
    std::optional<int> parent = ParentPid(at, proc_root);
    if (!parent || *parent <= 1) return false;
    if (*parent == ancestor) return true;
    at = *parent;
  }
  return false;
}

}  // namespace wattcut::agent
