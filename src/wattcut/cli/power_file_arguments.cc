#include "wattcut/cli/power_file_arguments.h"

namespace wattcut::cli {

void AddPowerFileOptions(CLI::App& command, PowerFileArguments& args) {
  command.add_option("--format", args.format, "auto, wattcut, nvidia-smi, prometheus or agent")->capture_default_str();
  command.add_option("--utc-offset", args.utc_offset, "What nvidia-smi's local times mean: +HH:MM, -HH:MM or Z");
  command.add_option("--time-zone", args.time_zone,
                     "What nvidia-smi's local times mean: a TZ database zone (Europe/Berlin)");
  command.add_option("--server-label", args.server_label,
                     "Prometheus: the label naming a series' server (default: Hostname, else instance)");
  command.add_option("--nvidia-smi-query", args.nvidia_smi_query,
                     "The --query-gpu fields of an nvidia-smi file written with noheader");
  command.add_option("--server-power-metric", args.server_power_metric,
                     "Prometheus: another whole-server power metric (W), e.g. a Redfish exporter's");
}

Result<telemetry::PowerReadOptions> PowerReadOptionsFrom(const PowerFileArguments& args) {
  if (!args.utc_offset.empty() && !args.time_zone.empty()) {
    return Error{"--utc-offset and --time-zone: give one (what nvidia-smi's local times mean)"};
  }
  telemetry::PowerReadOptions read;
  const std::string zone_text = !args.utc_offset.empty() ? args.utc_offset : args.time_zone;
  if (!zone_text.empty()) {
    Result<telemetry::LocalTimeZone> zone = telemetry::LocalTimeZone::Parse(zone_text);
    if (!zone.ok()) return zone.error().WithContext(args.utc_offset.empty() ? "--time-zone: " : "--utc-offset: ");
    read.time_zone = *zone;
  }
  read.server_label = args.server_label;
  read.nvidia_smi_query = args.nvidia_smi_query;
  read.server_power_metric = args.server_power_metric;
  return read;
}

std::string PowerFileOptionsText(const PowerFileArguments& args) {
  std::string out;
  if (args.format != "auto") out += " --format " + args.format;
  if (!args.utc_offset.empty()) out += " --utc-offset " + args.utc_offset;
  if (!args.time_zone.empty()) out += " --time-zone " + args.time_zone;
  if (!args.server_label.empty()) out += " --server-label " + args.server_label;
  if (!args.nvidia_smi_query.empty()) out += " --nvidia-smi-query " + args.nvidia_smi_query;
  if (!args.server_power_metric.empty()) out += " --server-power-metric " + args.server_power_metric;
  return out;
}

}  // namespace wattcut::cli
