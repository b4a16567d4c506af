#include "wattcut/telemetry/agent_readings_stream_writer.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace wattcut::telemetry {

std::string AgentReadingsStreamText(const PowerTelemetry& gpus, const ServerPowerSeries* server, double power_limit_w) {
  size_t samples = gpus.gpus.empty() ? 0 : gpus.gpus[0].samples.size();
  for (const GpuPowerSeries& g : gpus.gpus) samples = std::min(samples, g.samples.size());
  if (server) samples = std::min(samples, server->samples.size());
  std::vector<double> energy_mj(gpus.gpus.size(), 0.0);
  std::string out;
  for (size_t i = 0; i < samples; ++i) {
    nlohmann::json list = nlohmann::json::array();
    double gpu_sum = 0;
    for (size_t g = 0; g < gpus.gpus.size(); ++g) {
      const GpuPowerSample& s = gpus.gpus[g].samples[i];
      if (i > 0) energy_mj[g] += s.power_w * (s.time_s - gpus.gpus[g].samples[i - 1].time_s) * 1000;
      gpu_sum += s.power_w;
      list.push_back(
          {{"energy_mj", std::llround(energy_mj[g])},
           {"errors", nlohmann::json::object()},
           {"index", std::stoi(gpus.gpus[g].gpu)},
           {"power_limit_w", power_limit_w},
           {"power_w", std::round(s.power_w * 1000) / 1000},
           {"sm_clock_mhz", s.has_clock() ? nlohmann::json(std::lround(s.sm_clock_mhz)) : nlohmann::json()}});
    }
    nlohmann::json line = {{"gpus", list}, {"time_s", gpus.gpus[0].samples[i].time_s}};
    if (server) {
      const double w = server->samples[i].power_w;
      line["server"] = {{"gpu_power_w", gpu_sum},
                        {"non_gpu_power_w", w - gpu_sum},
                        {"power_w", w},
                        {"redfish_age_s", 0.5},
                        {"source", "redfish"}};
    }
    out += line.dump() + "\n";
  }
  return out;
}

}  // namespace wattcut::telemetry
