// Power as operators' monitoring records it, read into one shape whatever the file's format
// (power_telemetry_reader.h detects and reads the formats): per GPU (nvidia-smi, DCGM-exporter,
// the agent's GPUs) and per server (a BMC/Redfish series, the agent's server power). Times are
// Unix seconds, UTC, whatever the file wrote (local time, RFC 3339, Unix seconds).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace wattcut::telemetry {

inline constexpr double kUnknownClockMhz = std::numeric_limits<double>::quiet_NaN();

struct GpuPowerSample {
  double time_s = 0;   // Unix seconds, UTC
  double power_w = 0;  // finite, >= 0
  // The SM clock when the sample was taken (nvidia-smi clocks.sm, DCGM_FI_DEV_SM_CLOCK, the
  // agent's sm_clock_mhz); NaN where the file does not say.
  double sm_clock_mhz = kUnknownClockMhz;
  bool has_clock() const { return !std::isnan(sm_clock_mhz); }
};

// One GPU's readings, in increasing time (equal times are refused by the readers).
struct GpuPowerSeries {
  std::string server;  // the file's name in a folder, a host label, or the reader's default
  std::string gpu;     // the GPU's index as the tool printed it ("0"), or its UUID when no index
  std::vector<GpuPowerSample> samples;
};

struct ServerPowerSample {
  double time_s = 0;  // Unix seconds, UTC
  double power_w = 0;
};

// One server's whole-box power (a BMC/Redfish series, the agent's "server" power), increasing time.
struct ServerPowerSeries {
  std::string server;
  std::vector<ServerPowerSample> samples;
};

struct PowerTelemetry {
  std::string source;  // the file or folder as given
  std::string format;  // "nvidia-smi", "prometheus", "agent", "wattcut"
  // Which field of the file the power came from, and why that one: e.g. "power.draw.average (a
  // 1 s average; power.draw.instant is also there but is one instant)".
  std::string power_field;
  std::vector<GpuPowerSeries> gpus;        // sorted by (server, gpu)
  std::vector<ServerPowerSeries> servers;  // sorted by server
  // What a user should know about how the file was read (e.g. "12 readings were [N/A]").
  std::vector<std::string> notes;
};

// GPU ids in order: numerically when both are indices ("2" before "10"), else as text.
bool GpuIdLess(const std::string& a, const std::string& b);
// Puts `gpus` in (server, gpu) order and `servers` in server order, as the readers return them.
void SortSeries(PowerTelemetry& telemetry);

}  // namespace wattcut::telemetry
