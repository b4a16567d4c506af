// For the server's unit tests: a small profile CSV whose frontier has a few points.
#pragma once

#include <string>

namespace wattcut::server::testing {

// `stages` stages, three frequencies each (1410, 1200, 900 MHz): times fall and energies rise
// with the clock, as measured profiles do.
inline std::string SmallProfileCsv(int stages = 2) {
  std::string csv = "stage,instruction,frequency,time,energy\n";
  for (int s = 0; s < stages; ++s) {
    for (int f : {1410, 1200, 900}) {
      csv += std::to_string(s) + ",forward," + std::to_string(f) + "," + std::to_string(0.01 * 1410 / f) + "," +
             std::to_string(2.0 + f / 1000.0) + "\n";
      csv += std::to_string(s) + ",backward," + std::to_string(f) + "," + std::to_string(0.02 * 1410 / f) + "," +
             std::to_string(4.0 + f / 500.0) + "\n";
    }
  }
  return csv;
}

}  // namespace wattcut::server::testing
