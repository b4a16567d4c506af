#include "wattcut/agent/agent_readings.h"

#include "wattcut/agent/agent_views.h"
#include "wattcut/agent/server_power.h"
#include "wattcut/base/unix_time.h"

namespace wattcut::agent {

using nlohmann::json;

namespace {

double GpuPowerW(const std::vector<GpuReading>& readings) {
  double total = 0;
  for (const GpuReading& r : readings) total += r.power_w.value_or(0);
  return total;
}

// The GPUs' power from NVML's instant field when every GPU has it (so that a controller reading
// every 10 ms does not read a 1 s average); nullopt when one lacks it.
std::optional<double> GpuInstantPowerW(const std::vector<GpuReading>& readings) {
  double total = 0;
  for (const GpuReading& r : readings) {
    if (!r.power_instant_w) return std::nullopt;
    total += *r.power_instant_w;
  }
  return total;
}

// The CPU packages' energy, or why there is none (null: no RAPL; an error: a failed read).
json CpusJson(const AgentRouteContext& context) {
  if (context.cpu == nullptr) return nullptr;
  auto read = context.cpu->Read();
  if (!read.ok()) return json{{"error", read.error().message}};
  json cpus = json::array();
  for (const cpu::CpuEnergyReading& r : *read) {
    cpus.push_back({{"index", r.index},
                    {"package_energy_uj", r.package_energy_uj},
                    {"dram_energy_uj", r.dram_energy_uj ? json(*r.dram_energy_uj) : json(nullptr)}});
  }
  return cpus;
}

}  // namespace

AgentMetricsSnapshot MetricsSnapshot(const AgentRouteContext& context) {
  AgentMetricsSnapshot snapshot;
  snapshot.hostname = context.hostname;
  if (context.node->amd_gpus()) snapshot.gpu_series = GpuSeriesNames::kAmdDeviceMetricsExporter;
  const std::vector<GpuReading> readings = context.node->Read();
  const std::vector<GpuControl> controls = context.node->Controls();
  for (const GpuDescription& d : context.node->gpus()) {
    const GpuReading& r = readings[static_cast<size_t>(d.index)];
    const GpuControl& c = controls[static_cast<size_t>(d.index)];
    GpuTelemetry t;
    t.index = d.index;
    t.uuid = d.uuid;
    t.name = d.name;
    t.sm_clock_mhz = r.sm_clock_mhz;
    t.power_w = r.power_w;
    t.power_instant_w = r.power_instant_w;
    t.energy_mj = r.energy_mj;
    t.leased = c.lease.has_value();
    if (c.ceiling) t.ceiling_mhz = c.ceiling->mhz;
    if (c.sm_applied_known && c.sm_applied) t.applied_max_sm_mhz = c.sm_applied->max_mhz;
    snapshot.gpus.push_back(std::move(t));
  }
  if (context.power != nullptr) {
    snapshot.server = context.power->Read(GpuPowerW(readings));
    snapshot.stale_redfish_readings = context.power->stale_redfish_readings();
  }
  if (context.cpu != nullptr) {
    if (auto read = context.cpu->Read(); read.ok()) {  // a failed read leaves the families out this scrape
      for (size_t k = 0; k < read->size(); ++k) {
        const cpu::RaplPackage& p = context.cpu->packages()[k];
        const cpu::CpuEnergyReading& r = (*read)[k];
        CpuTelemetry c{r.index, p.package.path, r.package_energy_uj, r.dram_energy_uj, std::nullopt};
        if (p.dram) c.dram_path = p.dram->path;
        snapshot.cpus.push_back(std::move(c));
      }
    }
  }
  return snapshot;
}

json ReadingsJson(const AgentRouteContext& context) {
  const std::vector<GpuReading> readings = context.node->Read();
  const double now_s = UnixNowS();
  json doc = {{"time_s", now_s}, {"gpus", GpuReadingsJson(readings)}};
  doc["server"] = context.power != nullptr ? ToJson(context.power->Read(GpuPowerW(readings))) : json(nullptr);
  doc["cpus"] = CpusJson(context);
  return doc;
}

json ServerReadingJson(const AgentRouteContext& context, bool instant) {
  const std::vector<GpuReading> readings = context.node->Read();
  const double now_s = UnixNowS();
  const std::optional<double> instant_w = instant ? GpuInstantPowerW(readings) : std::nullopt;
  json doc = {{"time_s", now_s}, {"gpu_count", readings.size()}, {"gpu_power", instant_w ? "instant" : "power_usage"}};
  doc["server"] =
      context.power != nullptr ? ToJson(context.power->Read(instant_w.value_or(GpuPowerW(readings)))) : json(nullptr);
  return doc;
}

}  // namespace wattcut::agent
