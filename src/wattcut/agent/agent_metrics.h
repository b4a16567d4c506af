// The node agent's GET /metrics: Prometheus text exposition format 0.0.4, written by hand (like
// server/metrics.h).
//
// Per GPU, the DCGM exporter's series with its names, units, HELP texts and labels, so that
// dashboards and alerts built on dcgm-exporter work unchanged:
//   DCGM_FI_DEV_SM_CLOCK                  gauge    MHz
//   DCGM_FI_DEV_POWER_USAGE               gauge    W   (NVML's power usage: a 1 s average on recent GPUs)
//   DCGM_FI_DEV_POWER_USAGE_INSTANT       gauge    W   where the driver has the instant field
//   node_rapl_package_joules_total{index,path}, node_rapl_dram_joules_total{index,path}
//                                         counter  J   node_exporter's RAPL names, widened past wraps
//   DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION  counter  mJ
//   labels gpu="0", UUID="GPU-...", device="nvidia0", modelName="NVIDIA A100-SXM4-40GB", Hostname="node-1"
// A reading the GPU could not give is left out (as dcgm-exporter leaves out blank values).
//
// The agent's own series:
//   wattcut_agent_server_power_watts{source}                  gauge    "model" | "redfish"
//   wattcut_agent_server_gpu_power_watts                      gauge
//   wattcut_agent_server_non_gpu_power_watts                  gauge
//   wattcut_agent_redfish_reading_age_seconds                 gauge    with a Redfish reading
//   wattcut_agent_redfish_stale_readings_total                counter
//   wattcut_agent_leases_held{gpu,UUID}                       gauge    0 or 1
//   wattcut_agent_sm_clock_ceiling_mhz{gpu,UUID}              gauge    GPUs with a ceiling
//   wattcut_agent_applied_sm_clock_max_mhz{gpu,UUID}          gauge    GPUs whose SM clocks are locked
//   wattcut_agent_commands_total{command,outcome}             counter  outcome "ok" | "error"
//   wattcut_agent_lease_ends_total{reason}                    counter  released, exited, expired, connection_closed
//   wattcut_agent_nvml_errors_total{error}                    counter  NVML's error name
// Label values are escaped per the format (\\, \", \n), and made printable; the sets of command
// and NVML error labels are bounded (a name outside [a-z_] / [A-Z0-9_], or past 64 distinct
// ones, counts as "other"), so no input can grow the output without bound.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattcut/agent/lease_table.h"
#include "wattcut/agent/server_power.h"
#include "wattcut/base/mutex.h"

namespace wattcut::agent {

// One GPU as /metrics shows it: what it is, its readings (nullopt: could not be read), and what
// the agent holds on it.
struct GpuTelemetry {
  int index = 0;
  std::string uuid;
  std::string name;  // NVML's product name: dcgm-exporter's modelName
  std::optional<int> sm_clock_mhz;
  std::optional<double> power_w;
  std::optional<double> power_instant_w;  // NVML's instant power field, where the driver has it
  std::optional<int64_t> energy_mj;       // since the driver loaded
  bool leased = false;
  std::optional<int> ceiling_mhz;         // the row side's ceiling
  std::optional<int> applied_max_sm_mhz;  // the upper end of what NVML was told; nullopt: reset
};

// One CPU package's RAPL energy, widened past wraparound (cpu/cpu_energy_meter.h).
struct CpuTelemetry {
  int index = 0;
  std::string path;  // the package zone's folder (node_exporter's path label)
  int64_t package_energy_uj = 0;
  std::optional<int64_t> dram_energy_uj;
  std::optional<std::string> dram_path;
};

// Whose names the per-GPU series take: dcgm-exporter's on NVIDIA nodes, AMD's Device Metrics
// Exporter's on AMD nodes (docs/agent.md), so each vendor's dashboards read the agent.
enum class GpuSeriesNames { kDcgm, kAmdDeviceMetricsExporter };

struct AgentMetricsSnapshot {
  std::string hostname;  // dcgm-exporter's Hostname label (the node's name)
  GpuSeriesNames gpu_series = GpuSeriesNames::kDcgm;
  std::vector<GpuTelemetry> gpus;
  std::vector<CpuTelemetry> cpus;  // empty without RAPL
  std::optional<ServerPowerReading> server;
  uint64_t stale_redfish_readings = 0;  // ServerPowerMeter::stale_redfish_readings()
};

// The agent's counters, bumped from any thread (NodeAgentObserver's callbacks).
class AgentCounters {
 public:
  // `command`: the agent's name for it ("lock_sm", "set_ceiling", ...).
  void RecordCommand(const std::string& command, bool ok) EXCLUDES(mu_);
  void RecordLeaseEnd(LeaseEnd reason) EXCLUDES(mu_);
  // `nvml_error`: NVML's name ("NVML_ERROR_NO_PERMISSION").
  void RecordNvmlError(const std::string& nvml_error) EXCLUDES(mu_);

  uint64_t commands(const std::string& command, bool ok) const EXCLUDES(mu_);
  uint64_t lease_ends(LeaseEnd reason) const EXCLUDES(mu_);
  uint64_t nvml_errors(const std::string& nvml_error) const EXCLUDES(mu_);

  // Appends the counters' families to `out`.
  void Render(std::string& out) const EXCLUDES(mu_);

 private:
  // Bumped from NodeAgent's observer callbacks, which run under NodeAgent::mu_: that one comes
  // before this one, which is held for no call out of this class.
  mutable Mutex mu_;
  std::map<std::pair<std::string, bool>, uint64_t> commands_ GUARDED_BY(mu_);
  std::map<LeaseEnd, uint64_t> lease_ends_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> nvml_errors_ GUARDED_BY(mu_);
};

// The whole /metrics answer: the GPUs' series, the server's power, the counters.
std::string RenderAgentMetrics(const AgentMetricsSnapshot& snapshot, const AgentCounters& counters);

}  // namespace wattcut::agent
