#include "wattcut/telemetry/nvidia_smi_csv_writer.h"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace wattcut::telemetry {
namespace {

std::string Uuid(const std::string& server, const std::string& gpu) {
  // A stable, UUID-shaped name per (server, GPU), as nvidia-smi prints "GPU-" + a UUID.
  uint64_t h = 1469598103934665603ULL;
  for (char c : server + "/" + gpu) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char out[64];
  std::snprintf(out, sizeof(out), "GPU-%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(h & 0xffffffffULL), static_cast<unsigned long long>((h >> 32) & 0xffff),
                static_cast<unsigned long long>((h >> 48) & 0xffff), static_cast<unsigned long long>(h & 0xffff),
                static_cast<unsigned long long>((h * 31) & 0xffffffffffffULL));
  return out;
}

}  // namespace

std::string NvidiaSmiTimestamp(double unix_s, int utc_offset_minutes) {
  const double local = unix_s + utc_offset_minutes * 60.0;
  const auto ms_total = static_cast<long long>(std::llround(local * 1000));
  const time_t secs = static_cast<time_t>(ms_total / 1000);
  const int ms = static_cast<int>(ms_total % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char out[96];
  std::snprintf(out, sizeof(out), "%04d/%02d/%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return out;
}

std::string NvidiaSmiCsvText(const PowerTelemetry& average, const PowerTelemetry& instant,
                             const NvidiaSmiCsvOptions& options) {
  const std::string w = options.units ? " W" : "", mhz = options.units ? " MHz" : "";
  std::string out;
  if (options.header) {
    out += options.units ? "timestamp, index, uuid, power.draw [W], power.draw.average [W], power.draw.instant [W], "
                           "clocks.sm [MHz]\n"
                         : "timestamp, index, uuid, power.draw, power.draw.average, power.draw.instant, clocks.sm\n";
  }
  size_t samples = average.gpus.empty() ? 0 : average.gpus[0].samples.size();
  for (const GpuPowerSeries& g : average.gpus) samples = std::min(samples, g.samples.size());
  out.reserve(samples * average.gpus.size() * 120);
  char line[256];
  for (size_t i = 0; i < samples; ++i) {
    for (size_t g = 0; g < average.gpus.size(); ++g) {
      const GpuPowerSample& a = average.gpus[g].samples[i];
      const GpuPowerSample& in = instant.gpus[g].samples[i];
      std::string clock = a.has_clock() ? std::to_string(std::lround(a.sm_clock_mhz)) + mhz : "[N/A]";
      std::snprintf(line, sizeof(line), "%s, %s, %s, %.2f%s, %.2f%s, %.2f%s, %s\n",
                    NvidiaSmiTimestamp(a.time_s, options.utc_offset_minutes).c_str(), average.gpus[g].gpu.c_str(),
                    Uuid(average.gpus[g].server, average.gpus[g].gpu).c_str(), a.power_w, w.c_str(), a.power_w,
                    w.c_str(), in.power_w, w.c_str(), clock.c_str());
      out += line;
    }
  }
  return out;
}

}  // namespace wattcut::telemetry
