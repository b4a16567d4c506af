// Test support: the start of the schedules the deadline tests ask for, 2026-12-02T00:00Z in
// seconds since 1970, so that their prices and deadlines are written from one instant.
#pragma once

namespace wattcut::deadline::testing {

inline constexpr double kStart = 1'796'169'600;  // 2026-12-02T00:00Z

}  // namespace wattcut::deadline::testing
