// The state of the fake libnvidia-ml.so.1 (tests only), shared between processes through a
// file: one "key=value" per line, read and rewritten under flock(LOCK_EX). The path comes from
// WATTCUT_FAKE_NVML_STATE; every call appends a line to the same path + ".log".
//
// Keys (defaults in brackets, written by nvmlInit_v2 when the file is empty or missing):
//   gpu_count [2]  name [NVIDIA A100-SXM4-80GB (fake)]
//   max_mhz [1410]  min_mhz [210]  step_mhz [15]     supported SM clocks at every memory clock
//   memory_clocks [1593,1215]                         supported memory clocks, highest first
//   idle_power_mw [60000]  max_power_mw [400000]      power = idle + (max-idle)*load*(f/max_mhz)^3
//   load [1]                                          how busy every GPU is, 0..1 (a test's load script)
//   default_limit_mw [400000]  min_limit_mw [100000]  max_limit_mw [400000]
//   gpu<i>.locked_min / gpu<i>.locked_max [0 = not locked]  gpu<i>.mem_locked [0]
//   gpu<i>.power_limit_mw [default]  gpu<i>.energy_mj  gpu<i>.since_ns  (energy counter)
//   fail.<function>=<nvmlReturn_t>   injected error: that function returns it (and does nothing)
//   gpu<i>.fail.<function>=<nvmlReturn_t>   the same on GPU i only (the three setters)
// Header-only so that tests can read and write the same file.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>

namespace wattcut::fake_nvml {

using State = std::map<std::string, std::string>;

inline State ParseState(const std::string& text) {
  State state;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    state[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return state;
}

inline std::string FormatState(const State& state) {
  std::string out;
  for (const auto& [key, value] : state) out += key + "=" + value + "\n";
  return out;
}

// Runs `update(state)` on the file's state under an exclusive lock and writes it back.
// Returns false when the file cannot be opened.
template <typename Update>
bool UpdateStateFile(const std::string& path, Update update) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::flock(fd, LOCK_EX);
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  State state = ParseState(text);
  update(state);
  const std::string out = FormatState(state);
  if (::ftruncate(fd, 0) == 0 && ::lseek(fd, 0, SEEK_SET) == 0) {
    size_t written = 0;
    while (written < out.size()) {
      const ssize_t w = ::write(fd, out.data() + written, out.size() - written);
      if (w <= 0) break;
      written += static_cast<size_t>(w);
    }
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return true;
}

inline State ReadStateFile(const std::string& path) {
  State copy;
  UpdateStateFile(path, [&](State& state) { copy = state; });
  return copy;
}

}  // namespace wattcut::fake_nvml
