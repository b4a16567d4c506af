// For the server's unit tests: a small profile CSV whose frontier has a few points, and a
// hand-made frontier of three.
#pragma once

#include <string>

#include "wattcut/plan/frontier.h"

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

// One stage, two computations; points of 110 J, 100 J and 120 J at 12, 11 and 10 ms
// (slowest first), effective energies 100, 95 and 99 J.
inline Frontier ThreePointFrontier() {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  setup.options = {{{{1, 1410}}, {{1, 1410}}}};
  Frontier frontier(setup, {1, 1});
  frontier.AddPoint({12, 0.012, 110, 100}, {});
  frontier.AddPoint({11, 0.011, 100, 95}, {});
  frontier.AddPoint({10, 0.010, 120, 99}, {});
  return frontier;
}

}  // namespace wattcut::server::testing
