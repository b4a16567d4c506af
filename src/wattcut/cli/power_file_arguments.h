// The options that say how to read a power file operators' monitoring wrote (nvidia-smi CSV,
// Prometheus range queries, the agent's readings stream; telemetry/power_telemetry_reader.h),
// written once for `polca replay --power-trace` and `polca calibrate --power`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/power_telemetry_reader.h"

namespace wattcut::cli {

struct PowerFileArguments {
  std::string format = "auto";
  std::string utc_offset;
  std::string time_zone;
  std::string server_label;
  std::string nvidia_smi_query;
  std::string server_power_metric;
};

// --format, --utc-offset, --time-zone, --server-label, --nvidia-smi-query, --server-power-metric.
void AddPowerFileOptions(CLI::App& command, PowerFileArguments& args);
// The reader's options; fails on a bad offset or zone, or both given.
Result<telemetry::PowerReadOptions> PowerReadOptionsFrom(const PowerFileArguments& args);
// The options as given, for the command line written into an answer (" --format nvidia-smi ...").
std::string PowerFileOptionsText(const PowerFileArguments& args);

}  // namespace wattcut::cli
