// The wall clock as Unix seconds: what must mean the same moment after a restart or on another
// machine (a lease's expiry, a deadline, a token's lifetime, a reading's timestamp). It steps when
// the system's time is set: intervals and timeouts use steady_time.h instead.
#pragma once

#include <chrono>
#include <cstdint>

namespace wattcut {

// Seconds since the Unix epoch, with the system clock's resolution.
inline double UnixNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Whole milliseconds since the Unix epoch.
inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace wattcut
