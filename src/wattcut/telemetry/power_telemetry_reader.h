// Power telemetry in any of the formats operators' monitoring writes, from a file or a folder,
// into one PowerTelemetry:
//
//   nvidia-smi   nvidia_smi_csv.h         (a header starting "timestamp" or naming power.draw)
//   prometheus   prometheus_matrix.h and prometheus_power.h   (a JSON object starting {"status")
//   agent        agent_readings_stream.h  (NDJSON lines starting {"gpus" (the agent writes keys in
//                                          name order) or {"time_s")
//   wattcut      polca's time,server,power_w[,priority] CSV: detected here, read by polca
//                (polca/power_trace.h); ReadPowerTelemetry refuses it with a message saying so.
//
// A folder is every regular file in it, hidden ones (".x") skipped, in name order; all must be of
// one format; an nvidia-smi or agent file is one server, named by the file's name without its
// extension. An empty folder, a folder of mixed formats, or a file given with a --format it is not
// of is refused naming the files ("FILE looks like nvidia-smi CSV (header 'timestamp, index, ...'),
// not Prometheus JSON"). Each file is bounded (telemetry_limits.h, prometheus_matrix.h), and a
// folder holds at most kMaxTelemetryFiles files.
#pragma once

#include <optional>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/time_zone.h"

namespace wattcut::telemetry {

enum class PowerFormat { kAuto, kWattcut, kNvidiaSmi, kPrometheus, kAgent };

// "auto", "wattcut", "nvidia-smi", "prometheus", "agent".
Result<PowerFormat> ParsePowerFormat(const std::string& text);
std::string PowerFormatName(PowerFormat format);

// The format the first bytes of a file show, and what showed it ("header 'timestamp, index, ...'");
// nullopt when none.
struct DetectedFormat {
  PowerFormat format;
  std::string evidence;
};
std::optional<DetectedFormat> DetectPowerFormat(const std::string& head);

struct PowerReadOptions {
  std::optional<LocalTimeZone> time_zone;  // nvidia-smi's local times; nullopt: UTC, noted
  std::string nvidia_smi_query;            // the --query-gpu fields of a noheader file
  std::string server;                      // the server of a single nvidia-smi or agent file ("": its name)
  std::string server_label;                // Prometheus: the label naming the server ("": Hostname, else instance)
  std::string server_power_metric;         // Prometheus: another whole-server power metric
};

// The format of `path` (a file, or the files of a folder), as DetectPowerFormat finds it; an error
// when it finds none or, in a folder, more than one.
Result<PowerFormat> DetectPowerFormatOf(const std::string& path);

Result<PowerTelemetry> ReadPowerTelemetry(const std::string& path, PowerFormat format, const PowerReadOptions& options);

}  // namespace wattcut::telemetry
