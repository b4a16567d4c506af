#include "wattcut/agent/agent_metrics.h"

#include <cstdio>

#include "wattcut/base/prometheus_text.h"

namespace wattcut::agent {

namespace {

// Distinct command or NVML error labels kept; later ones count as "other".
constexpr size_t kMaxDistinctLabels = 64;
constexpr size_t kMaxLabelChars = 64;

// dcgm-exporter writes its float fields with six decimals ("266.172000").
std::string DcgmFloat(double value) {
  char buffer[400];
  std::snprintf(buffer, sizeof(buffer), "%.6f", value);
  return buffer;
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void Sample(std::string& out, const char* name, const std::string& labels, const std::string& value) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += ' ';
  out += value;
  out += '\n';
}

std::string Label(const char* name, const std::string& value) {
  return std::string(name) + "=\"" + PrometheusLabelValue(value) + "\"";
}

// dcgm-exporter's labels of a GPU, in its order.
std::string DcgmLabels(const GpuTelemetry& gpu, const std::string& hostname) {
  return Label("gpu", std::to_string(gpu.index)) + "," + Label("UUID", gpu.uuid) + "," +
         Label("device", "nvidia" + std::to_string(gpu.index)) + "," + Label("modelName", gpu.name) + "," +
         Label("Hostname", hostname);
}

std::string GpuLabels(const GpuTelemetry& gpu) {
  return Label("gpu", std::to_string(gpu.index)) + "," + Label("UUID", gpu.uuid);
}

// `name` when it is made of `allowed` characters only and short; "other" otherwise.
template <typename Allowed>
std::string BoundedName(const std::string& name, Allowed allowed) {
  if (name.empty() || name.size() > kMaxLabelChars) return "other";
  for (char c : name) {
    if (!allowed(c)) return "other";
  }
  return name;
}

bool CommandChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
bool NvmlErrorChar(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// The key a counter map counts `name` under: itself while there is room, "other" after.
template <typename Map, typename Key>
Key Bounded(const Map& map, Key key, Key other) {
  if (map.count(key) != 0 || map.size() < kMaxDistinctLabels) return key;
  return other;
}

constexpr LeaseEnd kLeaseEnds[] = {LeaseEnd::kReleased, LeaseEnd::kHolderExited, LeaseEnd::kExpired,
                                   LeaseEnd::kConnectionClosed, LeaseEnd::kJobEnded};

}  // namespace

void AgentCounters::RecordCommand(const std::string& command, bool ok) {
  std::string name = BoundedName(command, CommandChar);
  MutexLock lock(mu_);
  ++commands_[Bounded(commands_, std::make_pair(name, ok), std::make_pair(std::string("other"), ok))];
}

void AgentCounters::RecordLeaseEnd(LeaseEnd reason) {
  MutexLock lock(mu_);
  ++lease_ends_[reason];
}

void AgentCounters::RecordNvmlError(const std::string& nvml_error) {
  std::string name = BoundedName(nvml_error, NvmlErrorChar);
  MutexLock lock(mu_);
  ++nvml_errors_[Bounded(nvml_errors_, name, std::string("other"))];
}

uint64_t AgentCounters::commands(const std::string& command, bool ok) const {
  MutexLock lock(mu_);
  auto it = commands_.find({command, ok});
  return it == commands_.end() ? 0 : it->second;
}

uint64_t AgentCounters::lease_ends(LeaseEnd reason) const {
  MutexLock lock(mu_);
  auto it = lease_ends_.find(reason);
  return it == lease_ends_.end() ? 0 : it->second;
}

uint64_t AgentCounters::nvml_errors(const std::string& nvml_error) const {
  MutexLock lock(mu_);
  auto it = nvml_errors_.find(nvml_error);
  return it == nvml_errors_.end() ? 0 : it->second;
}

void AgentCounters::Render(std::string& out) const {
  MutexLock lock(mu_);
  Family(out, "wattcut_agent_commands_total", "counter",
         "Commands the agent carried out (ok) or refused or failed (error), by command.");
  for (const auto& [key, count] : commands_) {
    Sample(out, "wattcut_agent_commands_total",
           Label("command", key.first) + "," + Label("outcome", key.second ? "ok" : "error"), std::to_string(count));
  }
  Family(out, "wattcut_agent_lease_ends_total", "counter",
         "Leases ended, by reason: released, exited (the holder process), expired (not renewed), "
         "connection_closed (TCP), job_ended (its batch job ended: the Slurm epilog).");
  for (LeaseEnd reason : kLeaseEnds) {
    auto it = lease_ends_.find(reason);
    Sample(out, "wattcut_agent_lease_ends_total", Label("reason", LeaseEndName(reason)),
           std::to_string(it == lease_ends_.end() ? 0 : it->second));
  }
  Family(out, "wattcut_agent_nvml_errors_total", "counter", "NVML calls that failed, by NVML's error name.");
  for (const auto& [name, count] : nvml_errors_) {
    Sample(out, "wattcut_agent_nvml_errors_total", Label("error", name), std::to_string(count));
  }
}

namespace {

// dcgm-exporter's families, with its HELP texts (etc/default-counters.csv).
void RenderDcgmFamilies(const AgentMetricsSnapshot& snapshot, std::string& out) {
  Family(out, "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.sm_clock_mhz) {
      Sample(out, "DCGM_FI_DEV_SM_CLOCK", DcgmLabels(gpu, snapshot.hostname), std::to_string(*gpu.sm_clock_mhz));
    }
  }
  Family(out, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.power_w)
      Sample(out, "DCGM_FI_DEV_POWER_USAGE", DcgmLabels(gpu, snapshot.hostname), DcgmFloat(*gpu.power_w));
  }
  bool instant = false;
  for (const GpuTelemetry& gpu : snapshot.gpus) instant = instant || gpu.power_instant_w.has_value();
  if (instant) {
    Family(out, "DCGM_FI_DEV_POWER_USAGE_INSTANT", "gauge", "Current instantaneous power usage (in W).");
    for (const GpuTelemetry& gpu : snapshot.gpus) {
      if (gpu.power_instant_w) {
        Sample(out, "DCGM_FI_DEV_POWER_USAGE_INSTANT", DcgmLabels(gpu, snapshot.hostname),
               DcgmFloat(*gpu.power_instant_w));
      }
    }
  }
  Family(out, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.energy_mj) {
      Sample(out, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", DcgmLabels(gpu, snapshot.hostname),
             std::to_string(*gpu.energy_mj));
    }
  }
}

// AMD Device Metrics Exporter's families of the same readings (its GPU_CLOCK, GPU_POWER_USAGE and
// GPU_ENERGY_CONSUMED fields, lower-cased as it exports them; energy in microjoules), with its
// gpu_id, gpu_uuid, card_model and hostname labels.
std::string AmdLabels(const GpuTelemetry& gpu, const std::string& hostname) {
  return Label("gpu_id", std::to_string(gpu.index)) + "," + Label("gpu_uuid", gpu.uuid) + "," +
         Label("card_model", gpu.name) + "," + Label("hostname", hostname);
}

void RenderAmdFamilies(const AgentMetricsSnapshot& snapshot, std::string& out) {
  Family(out, "gpu_clock", "gauge", "Clock measure of the GPU in Mhz.");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.sm_clock_mhz) {
      Sample(out, "gpu_clock", AmdLabels(gpu, snapshot.hostname) + "," + Label("clock_type", "GPU_CLOCK_TYPE_SYSTEM"),
             std::to_string(*gpu.sm_clock_mhz));
    }
  }
  Family(out, "gpu_power_usage", "gauge", "GPU power usage in Watts.");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.power_w) Sample(out, "gpu_power_usage", AmdLabels(gpu, snapshot.hostname), DcgmFloat(*gpu.power_w));
  }
  Family(out, "gpu_energy_consumed", "counter", "Accumulated energy consumed by the GPU in Micro Jules (uJ).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.energy_mj) {
      Sample(out, "gpu_energy_consumed", AmdLabels(gpu, snapshot.hostname), std::to_string(*gpu.energy_mj * 1000));
    }
  }
}

// node_exporter's RAPL families, so that its dashboards read the agent's CPU energy.
void RenderRaplFamilies(const AgentMetricsSnapshot& snapshot, std::string& out) {
  if (!snapshot.cpus.empty()) {
    auto labels = [](int index, const std::string& path) {
      return Label("index", std::to_string(index)) + "," + Label("path", path);
    };
    Family(out, "node_rapl_package_joules_total", "counter", "Current RAPL package value in joules");
    for (const CpuTelemetry& cpu : snapshot.cpus) {
      Sample(out, "node_rapl_package_joules_total", labels(cpu.index, cpu.path),
             PrometheusValue(static_cast<double>(cpu.package_energy_uj) / 1e6));
    }
    bool dram = false;
    for (const CpuTelemetry& cpu : snapshot.cpus) dram = dram || cpu.dram_energy_uj.has_value();
    if (dram) {
      Family(out, "node_rapl_dram_joules_total", "counter", "Current RAPL dram value in joules");
      for (const CpuTelemetry& cpu : snapshot.cpus) {
        if (cpu.dram_energy_uj) {
          Sample(out, "node_rapl_dram_joules_total", labels(cpu.index, cpu.dram_path.value_or(cpu.path)),
                 PrometheusValue(static_cast<double>(*cpu.dram_energy_uj) / 1e6));
        }
      }
    }
  }
}

// The server's power (server_power.h) and the Redfish reading's staleness.
void RenderServerPowerFamilies(const AgentMetricsSnapshot& snapshot, std::string& out) {
  if (snapshot.server) {
    const ServerPowerReading& server = *snapshot.server;
    Family(out, "wattcut_agent_server_power_watts", "gauge",
           "The server's power: its GPUs' plus the non-GPU model's, or the BMC's Redfish reading (source).");
    Sample(out, "wattcut_agent_server_power_watts", Label("source", server.source), PrometheusValue(server.power_w));
    Family(out, "wattcut_agent_server_gpu_power_watts", "gauge", "The server's GPUs' power, summed.");
    Sample(out, "wattcut_agent_server_gpu_power_watts", "", PrometheusValue(server.gpu_power_w));
    Family(out, "wattcut_agent_server_non_gpu_power_watts", "gauge",
           "The server's power beyond its GPUs': the non-GPU model's, or the Redfish reading less the GPUs'.");
    Sample(out, "wattcut_agent_server_non_gpu_power_watts", "", PrometheusValue(server.non_gpu_power_w));
    if (server.redfish_age_s) {
      Family(out, "wattcut_agent_redfish_reading_age_seconds", "gauge", "Age of the last good Redfish power reading.");
      Sample(out, "wattcut_agent_redfish_reading_age_seconds", "", PrometheusValue(*server.redfish_age_s));
    }
  }
  Family(out, "wattcut_agent_redfish_stale_readings_total", "counter",
         "Server power readings that used the non-GPU model because the Redfish reading was missing or older than "
         "three periods.");
  Sample(out, "wattcut_agent_redfish_stale_readings_total", "", std::to_string(snapshot.stale_redfish_readings));
}

// What the agent holds for each GPU: its lease, the row's ceiling, the clocks applied.
void RenderGpuControlFamilies(const AgentMetricsSnapshot& snapshot, std::string& out) {
  Family(out, "wattcut_agent_leases_held", "gauge", "Whether a lease holds the GPU (1) or not (0).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    Sample(out, "wattcut_agent_leases_held", GpuLabels(gpu), gpu.leased ? "1" : "0");
  }
  Family(out, "wattcut_agent_sm_clock_ceiling_mhz", "gauge", "The row controller's SM clock ceiling (in MHz).");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.ceiling_mhz)
      Sample(out, "wattcut_agent_sm_clock_ceiling_mhz", GpuLabels(gpu), std::to_string(*gpu.ceiling_mhz));
  }
  Family(out, "wattcut_agent_applied_sm_clock_max_mhz", "gauge",
         "The upper end of the SM clock lock the agent applied: min(training lock, ceiling) (in MHz); absent when "
         "the SM clocks are reset.");
  for (const GpuTelemetry& gpu : snapshot.gpus) {
    if (gpu.applied_max_sm_mhz) {
      Sample(out, "wattcut_agent_applied_sm_clock_max_mhz", GpuLabels(gpu), std::to_string(*gpu.applied_max_sm_mhz));
    }
  }
}

}  // namespace

std::string RenderAgentMetrics(const AgentMetricsSnapshot& snapshot, const AgentCounters& counters) {
  std::string out;
  if (snapshot.gpu_series == GpuSeriesNames::kAmdDeviceMetricsExporter) {
    RenderAmdFamilies(snapshot, out);
  } else {
    RenderDcgmFamilies(snapshot, out);
  }
  RenderRaplFamilies(snapshot, out);
  RenderServerPowerFamilies(snapshot, out);
  RenderGpuControlFamilies(snapshot, out);
  counters.Render(out);
  return out;
}

}  // namespace wattcut::agent
