// The monotonic clock as seconds: what leases, timeouts and rates measure against (never the wall
// clock, which can step). One definition for every module below and above the GPU layer's Clock.
#pragma once

#include <chrono>

namespace wattcut {

// Seconds of std::chrono::steady_clock since its (arbitrary, fixed) origin; never decreases.
inline double SteadyNowS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace wattcut
