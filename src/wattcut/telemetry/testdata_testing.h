// Test support: the folder of recorded telemetry the readers' tests read (telemetry/testdata,
// given to the test executable as WATTCUT_TELEMETRY_TESTDATA).
#pragma once

#include <string>

namespace wattcut::telemetry::testing {

inline const std::string kTestdata = WATTCUT_TELEMETRY_TESTDATA;

}  // namespace wattcut::telemetry::testing
