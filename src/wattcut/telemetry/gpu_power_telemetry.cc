#include "wattcut/telemetry/gpu_power_telemetry.h"

#include <algorithm>
#include <tuple>

namespace wattcut::telemetry {

bool GpuIdLess(const std::string& a, const std::string& b) {
  const auto all_digits = [](const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (all_digits(a) && all_digits(b)) return std::stol(a) < std::stol(b);
  return a < b;
}

void SortSeries(PowerTelemetry& telemetry) {
  std::sort(telemetry.gpus.begin(), telemetry.gpus.end(), [](const GpuPowerSeries& x, const GpuPowerSeries& y) {
    if (x.server != y.server) return x.server < y.server;
    return GpuIdLess(x.gpu, y.gpu);
  });
  std::sort(telemetry.servers.begin(), telemetry.servers.end(),
            [](const ServerPowerSeries& x, const ServerPowerSeries& y) { return x.server < y.server; });
}

}  // namespace wattcut::telemetry
