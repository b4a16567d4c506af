// `wattcut polca calibrate --power node-a.nvidia-smi.csv --load node-a.vllm.csv --gpu a100 --out DIR`:
// the per-GPU power model fitted to one server's measured power and serving load
// (polca/power_calibration.h). Writes (polca/calibration_report.h):
//   DIR/calibrated.conf        the config to pass to polca simulate|sweep|replay --config
//   DIR/calibration.json       every parameter, the held-back part's errors, the notes
//   DIR/calibration_power.svg  measured against modelled power over the held-back part
//   DIR/calibration_error.svg  the held-back error's distribution by window kind
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/power_file_arguments.h"
#include "wattcut/polca/calibration_report.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_calibration.h"
#include "wattcut/polca/request_log.h"
#include "wattcut/polca/request_log_load.h"
#include "wattcut/telemetry/power_telemetry_reader.h"
#include "wattcut/telemetry/serving_load_reader.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::cli {
namespace {

using namespace wattcut::polca;

struct CalibrateArgs {
  std::string power_path;
  PowerFileArguments power;
  std::string load_path;
  std::string load_label = "instance";
  std::string gpu = "a100";
  std::string config_path;
  std::string server;
  std::string hold_back = "33%";
  std::string out_dir;
  bool overwrite = false;
};

// The one server's series of a telemetry file: `wanted`, or the only one there is.
template <typename Series>
Result<std::vector<const Series*>> OneServer(const std::vector<Series>& all, const std::string& wanted,
                                             const std::string& path) {
  std::vector<const Series*> out;
  std::vector<std::string> names;
  for (const Series& s : all) {
    if (names.empty() || names.back() != s.server) names.push_back(s.server);
    if (wanted.empty() || s.server == wanted) out.push_back(&s);
  }
  std::string listed;
  for (size_t i = 0; i < names.size() && i < 8; ++i) listed += (i ? ", " : "") + PrintableText(names[i]);
  if (wanted.empty() && names.size() > 1) {
    return Error{path + ": holds " + std::to_string(names.size()) + " servers (" + listed +
                 "): say which with --server"};
  }
  if (out.empty()) return Error{path + ": no server '" + PrintableText(wanted) + "' (it has " + listed + ")"};
  return out;
}

Result<double> ParseShare(const std::string& text) {
  std::string t = text;
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) {
    return Error{"--hold-back: expected a share like 33%, got '" + PrintableText(text) + "'"};
  }
  const double share = percent || v > 1 ? v / 100 : v;
  if (!(share > 0 && share <= 0.9)) return Error{"--hold-back: expected more than 0 % and at most 90 %"};
  return share;
}

int RunCalibrate(const CalibrateArgs& args) {
  const std::string name = "polca calibrate";
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> base = args.config_path.empty() ? BuiltInConfig(args.gpu) : ReadConfigFile(args.config_path);
  if (!base.ok()) return ReportError(name, base.error());
  Result<double> hold_back = ParseShare(args.hold_back);
  if (!hold_back.ok()) return ReportError(name, hold_back.error());
  Result<telemetry::PowerFormat> format = telemetry::ParsePowerFormat(args.power.format);
  if (!format.ok()) return ReportError(name, format.error().WithContext("--format: "));
  if (*format == telemetry::PowerFormat::kAuto) {
    Result<telemetry::PowerFormat> detected = telemetry::DetectPowerFormatOf(args.power_path);
    if (!detected.ok()) return ReportError(name, detected.error());
    format = *detected;
  }
  if (*format == telemetry::PowerFormat::kWattcut) {
    return ReportError(name, Error{args.power_path +
                                   ": per-server power (time,server,power_w) cannot calibrate the per-GPU model: give "
                                   "the GPUs' power (nvidia-smi --query-gpu=timestamp,index,power.draw.average,"
                                   "clocks.sm --format=csv -lms 250, DCGM via Prometheus, or the agent's stream)"});
  }
  Result<telemetry::PowerReadOptions> read = PowerReadOptionsFrom(args.power);
  if (!read.ok()) return ReportError(name, read.error());
  read->server = args.server;
  Result<telemetry::PowerTelemetry> power = telemetry::ReadPowerTelemetry(args.power_path, *format, *read);
  if (!power.ok()) return ReportError(name, power.error());
  Result<std::vector<const telemetry::GpuPowerSeries*>> gpu_series =
      OneServer(power->gpus, args.server, args.power_path);
  if (!gpu_series.ok()) return ReportError(name, gpu_series.error());
  std::vector<telemetry::GpuPowerSeries> gpus;
  for (const telemetry::GpuPowerSeries* g : *gpu_series) gpus.push_back(*g);
  const std::string server = gpus.front().server;
  const telemetry::ServerPowerSeries* server_power = nullptr;
  for (const telemetry::ServerPowerSeries& s : power->servers) {
    if (s.server == server) server_power = &s;
  }

  Result<std::string> load_text = CsvTable::ReadText(args.load_path, telemetry::kMaxTelemetryFileBytes);
  if (!load_text.ok()) return ReportError(name, load_text.error());
  const std::string& text = *load_text;
  if (std::optional<telemetry::DetectedFormat> d = telemetry::DetectPowerFormat(text.substr(0, 4096));
      d && d->format != telemetry::PowerFormat::kWattcut) {
    return ReportError(name, Error{args.load_path + ": this is " + telemetry::PowerFormatName(d->format) + " power (" +
                                   d->evidence + "), not serving load: pass it as --power"});
  }
  Result<telemetry::ServingLoadTelemetry> load = Error{""};
  if (LooksLikeRequestLog(text)) {
    Result<ServerRequestLog> log = ParseRequestLog(text, args.load_path, server);
    if (!log.ok()) return ReportError(name, log.error());
    load = LoadFromRequestLog(*log, gpus, *base);
  } else {
    telemetry::ServingLoadOptions load_options;
    load_options.server_label = args.load_label;
    load_options.server = server;
    load = telemetry::ParseServingLoad(text, args.load_path, load_options);
  }
  if (!load.ok()) return ReportError(name, load.error());
  Result<std::vector<const telemetry::ServingLoadSeries*>> load_series =
      OneServer(load->servers, load->servers.size() > 1 ? server : "", args.load_path);
  if (!load_series.ok()) return ReportError(name, load_series.error());

  WindowOptions window_options;
  window_options.sensor_average_s = SensorAverageSecondsFor(power->power_field, base->gpu.name);
  window_options.max_power_gap_s = 1.0;
  Result<CalibrationWindows> windows =
      BuildCalibrationWindows(gpus, server_power, *load_series->front(), window_options);
  if (!windows.ok())
    return ReportError(name, Error{args.power_path + " and " + args.load_path + ": " + windows.error().message});
  CalibrationOptions options;
  options.hold_back_fraction = *hold_back;
  Result<CalibrationResult> r = CalibratePowerModel(*windows, *base, options);
  if (!r.ok()) return ReportError(name, Error{args.power_path + " and " + args.load_path + ": " + r.error().message});

  r->config.source = "calibrated to " + server + " from " + args.power_path + " and " + args.load_path;
  CalibrationProvenance p;
  p.command = "wattcut polca calibrate --power " + args.power_path + " --load " + args.load_path +
              (args.config_path.empty() ? " --gpu " + args.gpu : " --config " + args.config_path) +
              PowerFileOptionsText(args.power) + (args.server.empty() ? "" : " --server " + args.server) +
              " --hold-back " + args.hold_back;
  p.server = server;
  p.power_source = args.power_path;
  p.power_format = power->format;
  p.power_field = power->power_field;
  p.load_source = args.load_path;
  p.load_format = load->format;
  p.base_config = base->source;
  p.reader_notes = power->notes;
  for (const std::string& n : load->notes) p.reader_notes.push_back(n);
  for (const std::string& n : windows->notes) p.reader_notes.push_back(n);
  if (!windows->has_server_power) {
    r->notes.insert(r->notes.begin(),
                    "server power here comes from the GPUs alone: the non-GPU part (server.*) is "
                    "the base config's model (" +
                        base->source + ")");
  }
  p.power_field += window_options.sensor_average_s > 0 ? "; read as a 1 s average" : "; read as instant samples";
  Status st = out->Write("calibrated.conf", CalibratedConfigText(*r, p));
  if (st.ok()) st = out->Write("calibration.json", CalibrationJson(*r, p).dump(2) + "\n");
  if (st.ok()) st = out->Write("calibration_power.svg", CalibrationPowerSvg(*r));
  if (st.ok()) st = out->Write("calibration_error.svg", CalibrationErrorSvg(*r));
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());
  for (const std::string& n : p.reader_notes) ReportWarning(name, n);
  for (const std::string& n : r->notes) ReportWarning(name, n);
  std::printf("calibrated %s (%d GPUs) from %s and %s:\n%s", server.c_str(), windows->gpus, args.power_path.c_str(),
              args.load_path.c_str(), CalibrationSummaryText(*r).c_str());
  std::printf("wrote %s/calibrated.conf\n", DisplayPath(args.out_dir).c_str());
  return 0;
}

}  // namespace

void AddPolcaCalibrateCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* c =
      polca.add_subcommand("calibrate", "Fit the per-GPU power model to one server's nvidia-smi power and vLLM load");
  c->add_option("--power", args->power_path,
                "The server's GPU power: nvidia-smi --query-gpu CSV, a Prometheus query_range answer (DCGM) or the "
                "agent's readings stream; a file or a folder")
      ->required();
  AddPowerFileOptions(*c, args->power);
  c->add_option("--load", args->load_path,
                "vLLM's metrics (CSV time,vllm:num_requests_running,... or a Prometheus query_range answer), or a "
                "request log (TIMESTAMP,ContextTokens,GeneratedTokens,server)")
      ->required();
  c->add_option("--load-label", args->load_label, "Prometheus load: the label naming a series' server")
      ->capture_default_str();
  c->add_option("--gpu", args->gpu, "Built-in base config when no --config is given: a100 or h100")
      ->capture_default_str();
  c->add_option("--config", args->config_path, "Base config: the served model's timing and what is not fitted");
  c->add_option("--server", args->server, "The server to calibrate, when the files hold several");
  c->add_option("--hold-back", args->hold_back, "Share of the run, at its end, held back to check the fit")
      ->capture_default_str();
  c->add_option("--out", args->out_dir, "Output directory")->required();
  c->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  c->callback([args, &status] { status.exit_code = RunCalibrate(*args); });
}

}  // namespace wattcut::cli
