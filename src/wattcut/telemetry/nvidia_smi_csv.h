// nvidia-smi's own CSV, exactly as
//
//   nvidia-smi --query-gpu=timestamp,index,power.draw,clocks.sm --format=csv -lms 250 > FILE
//
// prints it:
//
//   timestamp, index, power.draw [W], clocks.sm [MHz]
//   2024/05/01 14:00:00.250, 0, 85.59 W, 1410 MHz
//   2024/05/01 14:00:00.251, 1, [N/A], 1410 MHz
//
// Fields are separated by ", "; the header names the --query-gpu fields with their units in
// brackets; values carry their units ("85.59 W") unless --format=csv,nounits ("85.59"); with
// `noheader` there is no header, and the reader must be told the fields (`query`, the text given
// to --query-gpu). Several GPUs are interleaved, one row per GPU per sample.
//
// Columns read (others, such as name or utilization.gpu, are allowed and ignored):
//  * timestamp: local time "YYYY/MM/DD HH:MM:SS.mmm", read in `time_zone` (UTC when none is
//    given, with a note saying so). In a zone with daylight saving time a local time the clocks
//    skipped is refused (FILE:LINE names it); a time the clocks repeated is read as the earlier
//    instant unless that would not come after the GPU's previous reading, then as the later one
//    (a recording across the change runs on in increasing time).
//  * the power, from the first of these the file has: power.draw.average (NVML's 1 s average),
//    power.draw, power.draw.instant. Which one it was, and what it means, is in power_field.
//    NVML's nvmlDeviceGetPowerUsage, which power.draw reads, "On Ampere (except GA100) or newer
//    GPUs, ... returns power averaged over 1 sec interval. On GA100 and older architectures,
//    instantaneous power is returned" (NVIDIA's NVML reference, nvmlDeviceGetPowerUsage; the
//    average and instant fields are NVML_FI_DEV_POWER_AVERAGE and NVML_FI_DEV_POWER_INSTANT).
//    So on an A100 (GA100) power.draw is one instant, on an H100 a 1 s average.
//  * clocks.sm or clocks.current.sm (MHz) fills sm_clock_mhz when present.
//  * the GPU: index if present, else uuid. A file with neither holds one GPU: two readings at one
//    time are then refused (interleaved GPUs that cannot be told apart).
//
// "[N/A]", "[Not Supported]", "N/A" and other bracketed values ("[Unknown Error]") are not
// readings: a power one skips that row, a clock one leaves the clock unknown; both are counted
// in a note. A last line without a line end (an nvidia-smi killed while writing) is noted and
// skipped, even when what is left parses ("24" of "245.1 W"); a
// bad line elsewhere is an error "FILE:LINE: column 'NAME': expected ..., got '...'". A header
// repeated (two recordings appended to one file) is skipped with a note. Each GPU's readings
// must be in increasing time.
#pragma once

#include <optional>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/time_zone.h"

namespace wattcut::telemetry {

struct NvidiaSmiOptions {
  std::string server;  // the server the GPUs belong to; Read: the file's name without extension when empty
  // The --query-gpu fields ("timestamp,index,power.draw"), for a file written with noheader;
  // with a header, they must match it.
  std::string query;
  std::optional<LocalTimeZone> time_zone;  // nullopt: the timestamps are taken as UTC, with a note
};

Result<PowerTelemetry> ParseNvidiaSmiCsv(const std::string& text, const std::string& source_name,
                                         const NvidiaSmiOptions& options);
// At most kMaxTelemetryFileBytes (telemetry_limits.h), refused before it is read.
Result<PowerTelemetry> ReadNvidiaSmiCsv(const std::string& path, const NvidiaSmiOptions& options);

// Whether `first_line` is an nvidia-smi --query-gpu header, decided from all its fields: it names a
// power.draw field, or it starts with "timestamp" and every other field is a --query-gpu field
// (dotted, like clocks.sm, or index, uuid, name, ...): a serving engine's metrics with a
// `timestamp` column (num_requests_running, ...) are not.
bool LooksLikeNvidiaSmiHeader(const std::string& first_line);

}  // namespace wattcut::telemetry
