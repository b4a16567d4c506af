// Per-GPU power written as nvidia-smi prints it with
//   nvidia-smi --query-gpu=timestamp,index,uuid,power.draw,power.draw.average,power.draw.instant,clocks.sm
//              --format=csv -lms 250
// (", " separators, units in the header and in the values, local-time "YYYY/MM/DD HH:MM:SS.mmm"
// timestamps, one row per GPU per sample, GPUs in index order): the files the project's tests and
// docs example feed `polca replay` and `polca calibrate`, written exactly as the tool writes them.
#pragma once

#include <string>

#include "wattcut/telemetry/gpu_power_telemetry.h"

namespace wattcut::telemetry {

struct NvidiaSmiCsvOptions {
  int utc_offset_minutes = 0;  // the local time nvidia-smi's host runs in
  bool units = true;           // false: --format=csv,nounits
  bool header = true;          // false: --format=csv,noheader
};

// `average` holds power.draw.average (also printed as power.draw, as Ampere and newer report a
// 1 s average there) and the clocks; `instant` the same samples' power.draw.instant. Both have the
// same GPUs with samples at the same times.
std::string NvidiaSmiCsvText(const PowerTelemetry& average, const PowerTelemetry& instant,
                             const NvidiaSmiCsvOptions& options);

// "YYYY/MM/DD HH:MM:SS.mmm" for Unix seconds shifted by the offset (nvidia-smi's timestamp).
std::string NvidiaSmiTimestamp(double unix_s, int utc_offset_minutes);

}  // namespace wattcut::telemetry
