// Where a job's frontier is: none yet (no profile), computing, ready, or failed (with
// the error in the job's status).
#pragma once

namespace wattcut::server {

enum class FrontierState { kNone = 0, kComputing = 1, kReady = 2, kFailed = 3 };

// "none", "computing", "ready", "failed": as GET /v1/jobs/{id}/frontier says.
inline const char* FrontierStateName(FrontierState state) {
  static const char* const kNames[] = {"none", "computing", "ready", "failed"};
  return kNames[static_cast<int>(state)];
}

}  // namespace wattcut::server
