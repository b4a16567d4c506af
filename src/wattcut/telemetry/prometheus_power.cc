#include "wattcut/telemetry/prometheus_power.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::telemetry {
namespace {

constexpr const char* kGpuPower = "DCGM_FI_DEV_POWER_USAGE";
constexpr const char* kSmClock = "DCGM_FI_DEV_SM_CLOCK";
constexpr const char* kAgentServerPower = "wattcut_agent_server_power_watts";
constexpr const char* kIpmiPower = "ipmi_dcmi_power_consumption_watts";

std::string Label(const PrometheusSeries& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

// One point and where it came from, for joining series of one GPU.
struct Located {
  double time_s;
  double value;
  size_t series, point;
};

}  // namespace

Result<PowerTelemetry> PowerFromPrometheus(const PrometheusMatrix& matrix, const PrometheusPowerOptions& options) {
  const std::string at = matrix.source + ": ";
  PowerTelemetry telemetry;
  telemetry.source = matrix.source;
  telemetry.format = "prometheus";
  telemetry.notes = matrix.warnings;
  std::map<std::pair<std::string, std::string>, std::vector<Located>> gpu_power, gpu_clock;
  std::map<std::string, std::vector<Located>> server_power;
  int not_finite = 0, model_series = 0, split_series = 0;
  bool agent_redfish = false, dcgm = false, other_server = false;

  for (size_t i = 0; i < matrix.series.size(); ++i) {
    const PrometheusSeries& s = matrix.series[i];
    const std::string path = "data.result[" + std::to_string(i) + "]";
    const std::string name = MetricName(s);
    if (name.empty()) {
      return Error{at + path +
                   ".metric: no __name__ label (an expression such as avg(...) or rate(...) drops it): "
                   "query the metric itself, e.g. DCGM_FI_DEV_POWER_USAGE"};
    }
    std::string server;
    if (!options.server_label.empty()) {
      server = Label(s, options.server_label);
      if (server.empty()) {
        return Error{at + path + ".metric: no label '" + PrintableText(options.server_label) +
                     "' (the server label asked for) on " + PrintableText(name)};
      }
    } else {
      server = Label(s, "Hostname");
      if (server.empty()) server = Label(s, "instance");
      if (server.empty()) {
        return Error{at + path + ".metric: neither a Hostname nor an instance label to name the server of " +
                     PrintableText(name) + " (--server-label names another)"};
      }
    }
    const bool gpu_series = name == kGpuPower || name == kSmClock;
    const bool server_series = name == kIpmiPower || name == kAgentServerPower ||
                               (!options.server_power_metric.empty() && name == options.server_power_metric);
    if (name == "wattcut_agent_server_gpu_power_watts" || name == "wattcut_agent_server_non_gpu_power_watts") {
      ++split_series;
      continue;
    }
    if (!gpu_series && !server_series) {
      return Error{at + path + ".metric: metric '" + PrintableText(name) + "' is not a power series read here: " +
                   "expected DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_SM_CLOCK, wattcut_agent_server_power_watts, " +
                   "ipmi_dcmi_power_consumption_watts, or the metric given as the server power metric"};
    }
    if (name == kAgentServerPower) {
      const std::string source = Label(s, "source");
      if (source == "model") {
        ++model_series;
        continue;
      }
      if (source != "redfish") {
        return Error{at + path + ".metric.source: expected \"redfish\" or \"model\", got '" + PrintableText(source) +
                     "'"};
      }
      agent_redfish = true;
    } else if (server_series) {
      other_server = true;
    }
    std::string gpu;
    if (gpu_series) {
      dcgm = true;
      gpu = Label(s, "gpu");
      if (gpu.empty()) gpu = Label(s, "UUID");
      if (gpu.empty()) return Error{at + path + ".metric: neither a gpu nor a UUID label to tell the GPU of " + name};
    }
    std::vector<Located>& into = name == kGpuPower  ? gpu_power[{server, gpu}]
                                 : name == kSmClock ? gpu_clock[{server, gpu}]
                                                    : server_power[server];
    const bool clock = name == kSmClock;
    const double max = clock ? kMaxSmClockMhz : gpu_series ? kMaxGpuPowerW : kMaxServerPowerW;
    for (size_t k = 0; k < s.points.size(); ++k) {
      const PrometheusPoint& p = s.points[k];
      if (!std::isfinite(p.value)) {
        ++not_finite;
        continue;
      }
      if (p.value < 0 || p.value > max) {
        return Error{at + PrometheusPointPath(i, k) + "[1]: expected " +
                     (clock ? std::string("an SM clock in MHz") : std::string("a power in watts")) +
                     " >= 0 and at most " + GeneralText(max) + ", got '" + GeneralText(p.value) + "' (" +
                     PrintableText(name) + ")"};
      }
      into.push_back({p.time_s, p.value, i, k});
    }
  }

  // Joins the series of one GPU or server; two values at one time must agree.
  auto join = [&](std::vector<Located>& points) -> Status {
    std::stable_sort(points.begin(), points.end(),
                     [](const Located& a, const Located& b) { return a.time_s < b.time_s; });
    std::vector<Located> kept;
    kept.reserve(points.size());
    for (const Located& p : points) {
      if (!kept.empty() && kept.back().time_s == p.time_s) {
        if (kept.back().value == p.value) continue;
        return Error{at + PrometheusPointPath(p.series, p.point) + ": a second value at time " + GeneralText(p.time_s) +
                     " for the same GPU or server (" + PrometheusPointPath(kept.back().series, kept.back().point) +
                     " has " + GeneralText(kept.back().value) + "): two series with one server and GPU label"};
      }
      kept.push_back(p);
    }
    points = std::move(kept);
    return Status::Ok();
  };

  int clocked = 0;
  for (auto& [key, points] : gpu_power) {
    if (Status st = join(points); !st.ok()) return st.error();
    std::map<double, double> clocks;
    if (auto it = gpu_clock.find(key); it != gpu_clock.end()) {
      if (Status st = join(it->second); !st.ok()) return st.error();
      for (const Located& c : it->second) clocks[c.time_s] = c.value;
    }
    GpuPowerSeries series{key.first, key.second, {}};
    series.samples.reserve(points.size());
    for (const Located& p : points) {
      GpuPowerSample sample{p.time_s, p.value, kUnknownClockMhz};
      if (auto c = clocks.find(p.time_s); c != clocks.end()) {
        sample.sm_clock_mhz = c->second;
        ++clocked;
      }
      series.samples.push_back(sample);
    }
    if (!series.samples.empty()) telemetry.gpus.push_back(std::move(series));
  }
  for (auto& [server, points] : server_power) {
    if (Status st = join(points); !st.ok()) return st.error();
    ServerPowerSeries series{server, {}};
    for (const Located& p : points) series.samples.push_back({p.time_s, p.value});
    if (!series.samples.empty()) telemetry.servers.push_back(std::move(series));
  }
  if (telemetry.gpus.empty() && telemetry.servers.empty()) {
    return Error{at + "no power readings" +
                 (model_series > 0 ? std::string(": wattcut_agent_server_power_watts is the agent's model estimate "
                                                 "(source=\"model\"), not a measurement; query DCGM_FI_DEV_POWER_USAGE")
                  : matrix.series.empty() ? std::string(" (data.result is empty: did the query match?)")
                                          : std::string(""))};
  }
  std::vector<std::string> fields;
  if (dcgm) fields.push_back("DCGM_FI_DEV_POWER_USAGE (each GPU's power as DCGM samples it)");
  if (agent_redfish) fields.push_back("wattcut_agent_server_power_watts{source=\"redfish\"} (the BMC's server power)");
  if (other_server) fields.push_back("a whole-server power metric (the BMC's)");
  for (size_t i = 0; i < fields.size(); ++i) telemetry.power_field += (i > 0 ? "; " : "") + fields[i];
  if (not_finite > 0) {
    telemetry.notes.push_back(at + std::to_string(not_finite) + " samples were NaN or infinite and were skipped");
  }
  if (model_series > 0) {
    telemetry.notes.push_back(at + std::to_string(model_series) +
                              " wattcut_agent_server_power_watts series with source=\"model\" (the agent's estimate, "
                              "not a measurement) were skipped");
  }
  if (split_series > 0) {
    telemetry.notes.push_back(at + std::to_string(split_series) +
                              " series of the agent's GPU/non-GPU split were skipped (derived, not measured)");
  }
  if (!gpu_clock.empty() && clocked == 0) {
    telemetry.notes.push_back(at + "DCGM_FI_DEV_SM_CLOCK is there but at no time of a power sample");
  }
  SortSeries(telemetry);
  return telemetry;
}

}  // namespace wattcut::telemetry
