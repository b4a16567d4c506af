// Test support for the fake NVML: makes the test process load it as libnvidia-ml.so.1 through
// the ordinary loader search (LD_LIBRARY_PATH), and gives each test a fresh state file.
#pragma once

#include <string>

#include "wattcut/gpu/fake_nvml/fake_nvml_state.h"

namespace wattcut::fake_nvml {

// Re-executes the current process with `library_dir` first on LD_LIBRARY_PATH unless it already
// is (the loader reads LD_LIBRARY_PATH only at start). Call before anything loads NVML.
void EnsureLibraryPath(const std::string& library_dir);

inline constexpr const char* kStateVariable = "WATTCUT_FAKE_NVML_STATE";
// The fake librocm_smi64.so.1's (fake_amdgpu/fake_rocm_smi.cc): the same state file and keys.
inline constexpr const char* kRocmSmiStateVariable = "WATTCUT_FAKE_ROCM_SMI_STATE";

// A fresh state file in a new temporary directory, exported as `variable` (the fake NVML's, or
// the fake ROCm SMI's); `initial` is written into it. Removed (with its log) on destruction.
class ScopedFakeNvml {
 public:
  explicit ScopedFakeNvml(const State& initial = {}, const char* variable = kStateVariable);
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
  std::string variable_;
};

}  // namespace wattcut::fake_nvml
