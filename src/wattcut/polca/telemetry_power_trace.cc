#include "wattcut/polca/telemetry_power_trace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "wattcut/base/general_text.h"
#include "wattcut/base/order_statistics.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::polca {
namespace {

// The power of the reading of `samples` nearest `t`, when within `tolerance_s`.
std::optional<double> Nearest(const std::vector<telemetry::GpuPowerSample>& samples, double t, double tolerance_s) {
  auto it = std::lower_bound(samples.begin(), samples.end(), t,
                             [](const telemetry::GpuPowerSample& s, double v) { return s.time_s < v; });
  std::optional<double> best;
  double best_gap = tolerance_s;
  if (it != samples.end() && it->time_s - t <= best_gap) {
    best = it->power_w;
    best_gap = it->time_s - t;
  }
  if (it != samples.begin()) {
    const auto before = std::prev(it);
    if (t - before->time_s <= best_gap) best = before->power_w;
  }
  return best;
}

}  // namespace

Result<TelemetryPowerTrace> PowerTraceFromTelemetry(const telemetry::PowerTelemetry& telemetry,
                                                    const ServerSpec& spec) {
  TelemetryPowerTrace out;
  out.notes = telemetry.notes;
  std::map<std::string, std::vector<const telemetry::GpuPowerSeries*>> gpus;
  for (const telemetry::GpuPowerSeries& g : telemetry.gpus) gpus[g.server].push_back(&g);
  std::map<std::string, const telemetry::ServerPowerSeries*> measured;
  for (const telemetry::ServerPowerSeries& s : telemetry.servers) measured[s.server] = &s;

  std::vector<TracedServer> servers;
  for (const auto& [name, series] : measured) {
    TracedServer s;
    s.name = name;
    for (const telemetry::ServerPowerSample& p : series->samples) s.samples.push_back({p.time_s, p.power_w});
    servers.push_back(std::move(s));
    ++out.measured_servers;
  }
  int dropped = 0, gpu_count_differs = 0;
  for (const auto& [name, list] : gpus) {
    if (measured.count(name)) continue;  // the measured series is the server's power
    // The grid: the first GPU's times (`list` is in GPU order, telemetry::SortSeries).
    const telemetry::GpuPowerSeries& grid = *list.front();
    const double tolerance_s = MedianTimeStep(grid.samples) / 2;
    TracedServer s;
    s.name = name;
    for (const telemetry::GpuPowerSample& g : grid.samples) {
      double sum_w = g.power_w;
      bool complete = true;
      for (size_t i = 1; i < list.size() && complete; ++i) {
        std::optional<double> w = Nearest(list[i]->samples, g.time_s, tolerance_s);
        if (w) {
          sum_w += *w;
        } else {
          complete = false;
        }
      }
      if (!complete) {
        ++dropped;
        continue;
      }
      s.samples.push_back({g.time_s, spec.other_idle_w + sum_w * (1 + spec.other_w_per_gpu_w)});
    }
    if (s.samples.empty()) {
      return Error{telemetry.source + ": server '" + PrintableText(name) +
                   "': no time at which all its GPUs have a reading (GPU " + PrintableText(grid.gpu) +
                   "'s times are the grid)"};
    }
    if (static_cast<int>(list.size()) != spec.gpus) ++gpu_count_differs;
    servers.push_back(std::move(s));
    ++out.modelled_servers;
  }
  if (dropped > 0) {
    out.notes.push_back(std::to_string(dropped) +
                        " sample times of a server were dropped: some GPU of the server had no reading within half "
                        "a sample interval of them");
  }
  if (gpu_count_differs > 0) {
    out.notes.push_back(std::to_string(gpu_count_differs) + " servers have a GPU count other than the config's " +
                        "server.gpus = " + std::to_string(spec.gpus) + "; their non-GPU part is still the config's");
  }
  if (out.modelled_servers > 0) {
    out.notes.push_back(std::to_string(out.modelled_servers) +
                        " servers' power from GPUs alone: non-GPU part from the config's model (server.other_idle_w "
                        "+ GPU watts x (1 + server.other_w_per_gpu_w))");
  }
  double first = 0;
  bool any = false;
  for (const TracedServer& s : servers) {
    first = any ? std::min(first, s.samples.front().time_s) : s.samples.front().time_s;
    any = true;
  }
  Result<PowerTrace> trace =
      PowerTrace::FromServers(telemetry.source, GeneralText(first) + " (Unix seconds)", std::move(servers));
  if (!trace.ok()) return trace.error();
  out.trace = std::move(*trace);
  return out;
}

}  // namespace wattcut::polca
