#include "wattcut/agent/agent_views.h"

namespace wattcut::agent {

using nlohmann::json;

json RangeJson(const std::optional<ClockRange>& range) {
  if (!range) return nullptr;
  return json{{"min_mhz", range->min_mhz}, {"max_mhz", range->max_mhz}};
}

json HolderJson(const LeaseHolder& holder) {
  if (holder.kind == LeaseHolder::Kind::kProcess) {
    json doc = {{"pid", holder.pid}, {"uid", holder.uid}};
    if (!holder.job_id.empty()) doc["job"] = holder.job_id;
    return doc;
  }
  return json{{"token_line", holder.token_line}, {"connection", holder.connection_id}};
}

json LeaseJson(const Lease& lease) {
  // A zeusd client's implicit lease has no time to live: it lasts while its connection does. Its
  // stand-in ttl (10^12 s) is not a number a reader should see.
  const bool implicit = lease.ttl_s >= NodeAgent::kImplicitLeaseTtlS;
  return json{{"id", lease.id},
              {"gpus", lease.gpus},
              {"ttl_s", implicit ? json(nullptr) : json(lease.ttl_s)},
              {"implicit", implicit},
              {"holder", HolderJson(lease.holder)}};
}

json ControlJson(const NodeAgent& node, const GpuControl& control) {
  json ceiling = nullptr;
  if (control.ceiling) {
    ceiling = {{"mhz", control.ceiling->mhz},
               {"reason", control.ceiling->reason},
               {"expires_in_s", node.CeilingSecondsLeft(*control.ceiling)}};
  }
  json doc = {{"gpu", control.index},
              {"lease", control.lease ? LeaseJson(*control.lease) : json(nullptr)},
              {"lock", RangeJson(control.sm_lock)},
              {"ceiling", ceiling},
              {"applied", control.sm_applied_known ? RangeJson(control.sm_applied) : json("unknown")},
              {"memory_clocks", RangeJson(control.memory_lock)},
              {"power_limit_w",
               control.power_limit_mw ? json(static_cast<double>(*control.power_limit_mw) / 1000.0) : json(nullptr)}};
  return doc;
}

json JobJson(const NodeJob& job, bool with_credential) {
  json doc = {{"job", job.id},
              {"uid", job.uid},
              {"gpus", job.gpus},
              {"started_at_unix_s", job.started_at_unix_s},
              {"used_gpus", job.touched}};
  if (with_credential) doc["credential"] = job.credential;
  return doc;
}

json JobEnergyJson(const JobEnergy& energy) {
  json per_gpu = json::array();
  for (const auto& [gpu, joules] : energy.gpu_energy_j) {
    per_gpu.push_back({{"gpu", gpu}, {"energy_j", joules ? json(*joules) : json(nullptr)}});
  }
  return json{{"job", energy.job.id},
              {"uid", energy.job.uid},
              {"gpus", energy.job.gpus},
              {"duration_s", energy.duration_s},
              {"gpu_energy_j", energy.total_gpu_energy_j ? json(*energy.total_gpu_energy_j) : json(nullptr)},
              {"per_gpu", per_gpu},
              {"problems", energy.problems}};
}

json JobEndJson(const JobEnd& end) {
  json doc = JobEnergyJson(end);
  doc["leases_ended"] = end.leases_ended;
  doc["reset_gpus"] = end.reset_gpus;
  return doc;
}

json GpuJson(const GpuDescription& d) {
  json limits = nullptr;
  if (d.power_limits) {
    limits = {{"min", d.power_limits->min_mw / 1000.0},
              {"max", d.power_limits->max_mw / 1000.0},
              {"default", d.power_limits->default_mw / 1000.0}};
  }
  return json{{"index", d.index},
              {"uuid", d.uuid},
              {"name", d.name},
              {"sm_clocks_mhz", d.sm_clocks_mhz},
              {"memory_clocks_mhz", d.memory_clocks_mhz},
              {"power_limit_w", limits},
              {"energy_counter", d.energy_counter}};
}

json GpuReadingsJson(const std::vector<GpuReading>& readings) {
  json gpus = json::array();
  for (const GpuReading& r : readings) {
    json errors = json::object();
    for (const auto& [field, message] : r.errors) errors[field] = message;
    gpus.push_back({{"index", r.index},
                    {"power_w", r.power_w ? json(*r.power_w) : json(nullptr)},
                    {"power_instant_w", r.power_instant_w ? json(*r.power_instant_w) : json(nullptr)},
                    {"power_average_w", r.power_average_w ? json(*r.power_average_w) : json(nullptr)},
                    {"energy_mj", r.energy_mj ? json(*r.energy_mj) : json(nullptr)},
                    {"sm_clock_mhz", r.sm_clock_mhz ? json(*r.sm_clock_mhz) : json(nullptr)},
                    {"power_limit_w", r.power_limit_w ? json(*r.power_limit_w) : json(nullptr)},
                    {"errors", errors}});
  }
  return gpus;
}

}  // namespace wattcut::agent
