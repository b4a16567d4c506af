// Test support for the fake NVML: makes the test process load it as libnvidia-ml.so.1 through
// the ordinary loader search (LD_LIBRARY_PATH), and gives each test a fresh state file.
#pragma once

#include <string>

#include "wattcut/gpu/fake_nvml/fake_nvml_state.h"

namespace wattcut::fake_nvml {

// Re-executes the current process with `library_dir` first on LD_LIBRARY_PATH unless it already
// is (the loader reads LD_LIBRARY_PATH only at start). Call before anything loads NVML.
void EnsureLibraryPath(const std::string& library_dir);

// A fresh state file in a new temporary directory, exported as WATTCUT_FAKE_NVML_STATE;
// `initial` is written into it. Removed (with its log) on destruction.
class ScopedFakeNvml {
 public:
  explicit ScopedFakeNvml(const State& initial = {});
  ~ScopedFakeNvml();
  ScopedFakeNvml(const ScopedFakeNvml&) = delete;
  ScopedFakeNvml& operator=(const ScopedFakeNvml&) = delete;

  const std::string& path() const { return path_; }
  State Read() const { return ReadStateFile(path_); }
  void Set(const std::string& key, const std::string& value);
  void Erase(const std::string& key);
  // The call log, one "PID FUNCTION(ARGS) -> RC" per line.
  std::string Log() const;

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace wattcut::fake_nvml
