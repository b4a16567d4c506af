// The bounds every telemetry reader holds its input to, written once. A file is refused before it
// is read when it is larger than kMaxTelemetryFileBytes (its text is held in memory while it is
// read, and its readings, 24 bytes each, after); a value outside its range is refused with the
// place it was read from.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wattcut::telemetry {

inline constexpr uint64_t kMaxTelemetryFileBytes = uint64_t{1} << 30;  // 1 GiB a file
inline constexpr int kMaxTelemetryFiles = 2000;                        // files of a folder (a row's servers)
inline constexpr double kMaxGpuPowerW = 10000;                         // one GPU (a B200 draws about 1 kW)
inline constexpr double kMaxServerPowerW = 1e6;                        // one server (polca's bound too)
inline constexpr double kMaxSmClockMhz = 10000;
// A label's name or value (a Prometheus series' Hostname, instance, model_name): a host name has at
// most 253 bytes, a label anything real well under this. A 50 MB label once made a comparison per
// load row take minutes; it is refused where it is read.
inline constexpr size_t kMaxLabelBytes = 1024;

}  // namespace wattcut::telemetry
