// Per-GPU power from nvidia-smi's own CSV, exactly as
//   nvidia-smi --query-gpu=timestamp,index,uuid,power.draw[,power.draw.average,power.draw.instant,clocks.sm]
//              --format=csv[,nounits] -lms 250 > FILE
// prints it: ", " separators; units in the header ("power.draw [W]") and in the values
// ("85.59 W") unless nounits; "[N/A]", "[Not Supported]" or "N/A" where a field cannot be read
// (that reading is skipped and counted in a note); local-time "YYYY/MM/DD HH:MM:SS.mmm" timestamps;
// one row per GPU per sample, GPUs interleaved.
//
//  * Power: power.draw.average when the file has it (NVML's 1 s average), else power.draw (also a
//    1 s average on Ampere and newer, an instant reading before), else power.draw.instant; the
//    result's power_field says which and why.
//  * Clock: clocks.sm (or clocks.current.sm) fills sm_clock_mhz where present.
//  * GPU: the index column, else the uuid, else one GPU ("0"; two rows at one time are then refused).
//  * Time: the timestamps are the host's local time; `utc_offset_minutes` says what it was (UTC
//    when not given: a note says so). A GPU's readings must increase in time.
//  * `--format=csv,noheader` files have no header to name the fields: refused, with the fix.
// Every error names FILE:LINE: column and what was expected; values quoted go through PrintableText.
#pragma once

#include <optional>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"

namespace wattcut::telemetry {

inline constexpr uint64_t kMaxTelemetryFileBytes = uint64_t{1} << 30;

struct NvidiaSmiReadOptions {
  std::string server;                     // the series' server; empty: the file name up to its first dot
  std::optional<int> utc_offset_minutes;  // unset: the timestamps are taken as UTC (noted)
};

Result<PowerTelemetry> ReadNvidiaSmiCsv(const std::string& path, const NvidiaSmiReadOptions& options);
// Same, from text; `source_name` stands for the file in messages.
Result<PowerTelemetry> ParseNvidiaSmiCsv(const std::string& text, const std::string& source_name,
                                         const NvidiaSmiReadOptions& options);

// Whether text starts like nvidia-smi's CSV (its header names timestamp and a power.draw field).
bool LooksLikeNvidiaSmiCsv(const std::string& text);

// "+02:00", "-05:30", "Z" -> minutes east of UTC; the error says what was expected.
Result<int> ParseUtcOffset(const std::string& text);

}  // namespace wattcut::telemetry
