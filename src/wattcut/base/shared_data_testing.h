// Test support: skip a test when ../shared is missing, but fail under CI.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "wattcut/base/shared_data.h"

// Declares `const std::string var` holding SharedDataPath(relative); skips the test
// (or fails it under CI=true) when that file does not exist.
#define WATTCUT_REQUIRE_SHARED_FILE(var, relative)                                          \
  const std::string var = ::wattcut::SharedDataPath(relative);                              \
  if (!std::filesystem::exists(var)) {                                                      \
    if (::wattcut::RunningUnderCi()) {                                                      \
      FAIL() << "shared data file " << var                                                  \
             << " is missing; CI needs ../shared beside the clone (or WATTCUT_SHARED_DIR)"; \
    }                                                                                       \
    GTEST_SKIP() << "shared data file " << var                                              \
                 << " is missing; set WATTCUT_SHARED_DIR to the shared folder to run this"; \
  }
