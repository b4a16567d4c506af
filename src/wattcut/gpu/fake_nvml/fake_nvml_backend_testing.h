// Test support for a test executable whose own process opens the NVML backend over the fake
// libnvidia-ml.so.1: a source that includes this header puts the fake's folder first on
// LD_LIBRARY_PATH at static initialisation (EnsureLibraryPath, which re-executes the process
// once, before main), so that the ordinary loader search finds the fake.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "wattcut/gpu/fake_nvml/fake_nvml_test_support.h"
#include "wattcut/gpu/nvml_backend.h"

namespace wattcut::fake_nvml {

// True once the fake's folder is first on the path; a test that relies on it says so by reading
// it (ASSERT_TRUE(kLibraryPathSet)).
inline const bool kLibraryPathSet = (EnsureLibraryPath(WATTCUT_FAKE_NVML_DIR), true);

// The NVML backend over `library` (the fake, found on the path, by default); a failure to open it
// fails the test and gives null.
inline std::unique_ptr<GpuBackend> OpenFakeNvmlBackend(const std::string& library = nvml::kDefaultLibraryName) {
  auto backend = OpenNvmlBackend(library);
  EXPECT_TRUE(backend.ok()) << backend.error().message;
  return backend.ok() ? std::move(backend).value() : nullptr;
}

}  // namespace wattcut::fake_nvml
