// The GPUs both fake driver libraries simulate (tests only): the fake libnvidia-ml.so.1
// (fake_nvml.cc) and the fake librocm_smi64.so.1 (fake_amdgpu/fake_rocm_smi.cc) keep their GPUs in
// a state file (fake_nvml_state.h) and run each call through Api(): the state loaded under its
// lock, an injected failure or the call, every GPU's energy counter moved up to now, the state
// saved and the call logged. One power model for both:
//   power = idle + (max - idle) * load * (clock / max_mhz)^3, the clock being the lock's maximum
//   or max_mhz; energy accumulates that power; the averaged power lags it by power_average_s.
// Header-only, inline: each fake library compiles it into itself.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "wattcut/gpu/fake_nvml/fake_nvml_state.h"

namespace wattcut::fake_gpu {

using fake_nvml::State;

inline constexpr int kMaxGpus = 64;

inline long Long(const State& s, const std::string& key, long fallback) {
  auto it = s.find(key);
  return it == s.end() || it->second.empty() ? fallback : std::strtol(it->second.c_str(), nullptr, 10);
}
inline double Double(const State& s, const std::string& key, double fallback) {
  auto it = s.find(key);
  return it == s.end() || it->second.empty() ? fallback : std::strtod(it->second.c_str(), nullptr);
}
// "1593,1215" -> {1593, 1215}: a list key (memory_clocks).
inline std::vector<unsigned> Unsigneds(const State& s, const std::string& key) {
  std::vector<unsigned> out;
  auto it = s.find(key);
  const std::string text = it == s.end() ? "" : it->second;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(static_cast<unsigned>(std::strtoul(text.substr(start, end - start).c_str(), nullptr, 10)));
    start = end + 1;
  }
  return out;
}
inline std::string Gpu(unsigned index, const char* key) { return "gpu" + std::to_string(index) + "." + key; }

inline long long NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

// The clock GPU `gpu` runs: its lock's maximum, or max_mhz.
inline int CurrentClock(const State& s, unsigned gpu) {
  const long locked = Long(s, Gpu(gpu, "locked_max"), 0);
  return static_cast<int>(locked > 0 ? locked : Long(s, "max_mhz", 1410));
}

inline double PowerMw(const State& s, unsigned gpu) {
  const double idle = Double(s, "idle_power_mw", 60000), max = Double(s, "max_power_mw", 400000);
  const double ratio = CurrentClock(s, gpu) / Double(s, "max_mhz", 1410);
  // How busy the GPUs are (a test's load script moves it): 1 draws the full dynamic power.
  const double load = Double(s, "load", 1);
  return idle + (max - idle) * load * ratio * ratio * ratio;
}

// Moves the energy counter of every GPU up to now at its current clock.
inline void Advance(State& s) {
  const long long now = NowNs();
  const long count = Long(s, "gpu_count", 0);
  for (unsigned g = 0; g < static_cast<unsigned>(count) && g < kMaxGpus; ++g) {
    const long long since = Long(s, Gpu(g, "since_ns"), now);
    const double power_mw = PowerMw(s, g);
    const double energy = Double(s, Gpu(g, "energy_mj"), 0) + power_mw * static_cast<double>(now - since) / 1e9;
    char text[64];
    std::snprintf(text, sizeof text, "%.6f", energy);
    s[Gpu(g, "energy_mj")] = text;
    // The driver's averaged power, modelled as a first-order lag behind the power ("power_average_s",
    // 1 s as NVML's window; a test may shorten it): a step in load shows in the instant power at
    // once and in the average over about that long.
    const double average = Double(s, Gpu(g, "power_avg_mw"), power_mw);
    const double dt_s = static_cast<double>(now - since) / 1e9;
    const double lag_s = std::max(1e-3, Double(s, "power_average_s", 1.0));
    std::snprintf(text, sizeof text, "%.3f", average + (power_mw - average) * (1 - std::exp(-dt_s / lag_s)));
    s[Gpu(g, "power_avg_mw")] = text;
    s[Gpu(g, "since_ns")] = std::to_string(now);
  }
}

// Appends "PID LINE" to the state file's log (state path + ".log").
inline void Log(const char* state_path, const std::string& line) {
  if (state_path == nullptr) return;
  const std::string log_path = std::string(state_path) + ".log";
  if (FILE* f = std::fopen(log_path.c_str(), "a")) {
    std::fprintf(f, "%d %s\n", static_cast<int>(getpid()), line.c_str());
    std::fclose(f);
  }
}

// Runs one API call of a fake library whose state is at `state_path`: loads the state, writes the
// library's `defaults` into it where missing, applies an injected failure ("fail.<function>=<rc>")
// or `body`, saves, logs. `no_driver` is the library's answer when there is no state file.
template <typename Rc, typename Defaults, typename Body>
Rc Api(const char* state_path, Rc success, Rc no_driver, Defaults defaults, const char* function,
       const std::string& args, Body body) {
  if (state_path == nullptr) return no_driver;
  Rc rc = success;
  const bool ok = fake_nvml::UpdateStateFile(state_path, [&](State& s) {
    defaults(s);
    if (auto it = s.find(std::string("fail.") + function); it != s.end()) {
      rc = static_cast<Rc>(std::strtoll(it->second.c_str(), nullptr, 10));
      return;
    }
    Advance(s);
    rc = body(s);
  });
  if (!ok) rc = no_driver;
  Log(state_path, std::string(function) + "(" + args + ") -> " + std::to_string(rc));
  return rc;
}

}  // namespace wattcut::fake_gpu
