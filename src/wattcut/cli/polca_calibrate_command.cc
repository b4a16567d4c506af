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
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/joined_text.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/power_file_arguments.h"
#include "wattcut/polca/calibration_alignment.h"
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
  std::vector<std::string> power_paths;  // one per run, paired with load_paths
  PowerFileArguments power;
  std::vector<std::string> load_paths;
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

// One run's power and load: its windows, and what the readers said.
struct RunData {
  CalibrationWindows windows;
  std::string server;
  std::string power_format, power_field, load_format;
  double sensor_average_s = 0;  // how its power readings are read (SensorAverageSecondsFor)
  std::vector<std::string> notes;
};

Result<RunData> ReadRun(const CalibrateArgs& args, const std::string& power_path, const std::string& load_path,
                        const PolcaConfig& base, const telemetry::PowerReadOptions& read,
                        const WindowOptions& window_defaults) {
  Result<telemetry::PowerFormat> format = telemetry::ParsePowerFormat(args.power.format);
  if (!format.ok()) return format.error().WithContext("--format: ");
  if (*format == telemetry::PowerFormat::kAuto) {
    Result<telemetry::PowerFormat> detected = telemetry::DetectPowerFormatOf(power_path);
    if (!detected.ok()) return detected.error();
    format = *detected;
  }
  if (*format == telemetry::PowerFormat::kWattcut) {
    return Error{power_path +
                 ": per-server power (time,server,power_w) cannot calibrate the per-GPU model: give "
                 "the GPUs' power (nvidia-smi --query-gpu=timestamp,index,power.draw.average,"
                 "clocks.sm --format=csv -lms 250, DCGM via Prometheus, or the agent's stream)"};
  }
  Result<telemetry::PowerTelemetry> power = telemetry::ReadPowerTelemetry(power_path, *format, read);
  if (!power.ok()) return power.error();
  Result<std::vector<const telemetry::GpuPowerSeries*>> gpu_series = OneServer(power->gpus, args.server, power_path);
  if (!gpu_series.ok()) return gpu_series.error();
  std::vector<telemetry::GpuPowerSeries> gpus;
  for (const telemetry::GpuPowerSeries* g : *gpu_series) gpus.push_back(*g);
  RunData run;
  run.server = gpus.front().server;
  const telemetry::ServerPowerSeries* server_power = nullptr;
  for (const telemetry::ServerPowerSeries& s : power->servers) {
    if (s.server == run.server) server_power = &s;
  }

  Result<std::string> load_text = CsvTable::ReadText(load_path, telemetry::kMaxTelemetryFileBytes);
  if (!load_text.ok()) return load_text.error();
  const std::string& text = *load_text;
  if (std::optional<telemetry::DetectedFormat> d = telemetry::DetectPowerFormat(text.substr(0, 4096));
      d && d->format != telemetry::PowerFormat::kWattcut) {
    return Error{load_path + ": this is " + telemetry::PowerFormatName(d->format) + " power (" + d->evidence +
                 "), not serving load: pass it as --power"};
  }
  Result<telemetry::ServingLoadTelemetry> load = Error{""};
  if (LooksLikeRequestLog(text)) {
    Result<ServerRequestLog> log = ParseRequestLog(text, load_path, run.server);
    if (!log.ok()) return log.error();
    load = LoadFromRequestLog(*log, gpus, base);
  } else {
    telemetry::ServingLoadOptions load_options;
    load_options.server_label = args.load_label;
    load_options.server = run.server;
    load = telemetry::ParseServingLoad(text, load_path, load_options);
  }
  if (!load.ok()) return load.error();
  Result<std::vector<const telemetry::ServingLoadSeries*>> load_series =
      OneServer(load->servers, load->servers.size() > 1 ? run.server : "", load_path);
  if (!load_series.ok()) return load_series.error();
  const telemetry::ServingLoadSeries& series = *load_series->front();

  WindowOptions window_options = window_defaults;
  window_options.sensor_average_s = SensorAverageSecondsFor(power->power_field, base.gpu.name);
  // Power and load lined up as read, or better at another shift of nvidia-smi's local times.
  const std::optional<PowerLoadAlignment> alignment = MeasureAlignment(gpus, series);
  const std::optional<int> offset_used_s = read.time_zone ? read.time_zone->fixed_offset_s() : std::optional<int>(0);
  Result<CalibrationWindows> windows = BuildCalibrationWindows(gpus, server_power, series, window_options);
  if (!windows.ok()) {
    std::string advice;
    if (alignment && alignment->better_elsewhere()) advice = "; " + alignment->Advice(offset_used_s);
    return Error{power_path + " and " + load_path + ": " + windows.error().message + advice};
  }
  run.windows = std::move(*windows);
  if (alignment && alignment->better_elsewhere()) {
    run.notes.push_back(power_path + " and " + load_path + ": " + alignment->Advice(offset_used_s));
  }
  run.power_format = power->format;
  run.sensor_average_s = window_options.sensor_average_s;
  run.power_field = power->power_field +
                    (window_options.sensor_average_s > 0 ? "; read as a 1 s average" : "; read as instant samples");
  run.load_format = load->format;
  for (const std::string& n : power->notes) run.notes.push_back(n);
  for (const std::string& n : load->notes) run.notes.push_back(n);
  return run;
}

int RunCalibrate(const CalibrateArgs& args) {
  const std::string name = "polca calibrate";
  if (args.power_paths.size() != args.load_paths.size()) {
    return ReportError(name, Error{"--power was given " + std::to_string(args.power_paths.size()) +
                                   " times and --load " + std::to_string(args.load_paths.size()) +
                                   ": give one --power and one --load for each run, in the same order"});
  }
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> base = args.config_path.empty() ? BuiltInConfig(args.gpu) : ReadConfigFile(args.config_path);
  if (!base.ok()) return ReportError(name, base.error());
  Result<double> hold_back = ParseShare(args.hold_back);
  if (!hold_back.ok()) return ReportError(name, hold_back.error());
  Result<telemetry::PowerReadOptions> read = PowerReadOptionsFrom(args.power);
  if (!read.ok()) return ReportError(name, read.error());
  read->server = args.server;
  WindowOptions window_defaults;
  window_defaults.max_power_gap_s = 1.0;

  std::vector<RunData> runs;
  std::vector<CalibrationWindows> windows;
  std::vector<std::string> reader_notes;
  for (size_t i = 0; i < args.power_paths.size(); ++i) {
    Result<RunData> run = ReadRun(args, args.power_paths[i], args.load_paths[i], *base, *read, window_defaults);
    if (!run.ok()) {
      for (const std::string& n : reader_notes) ReportWarning(name, n);
      return ReportError(name, run.error());
    }
    const std::string prefix = args.power_paths.size() > 1 ? "run " + std::to_string(i + 1) + ": " : "";
    for (const std::string& n : run->notes) reader_notes.push_back(prefix + n);
    windows.push_back(run->windows);
    runs.push_back(std::move(*run));
  }
  const double sensor_average_s = runs.front().sensor_average_s;
  for (const RunData& r : runs) {
    if (r.sensor_average_s != sensor_average_s) {
      return ReportError(name, Error{"the runs' power readings differ: some are 1 s averages and some instants; fit "
                                     "runs of one setup, read the same way"});
    }
  }
  Result<CalibrationWindows> joined = JoinRuns(std::move(windows));
  if (!joined.ok()) return ReportError(name, joined.error());
  for (const std::string& n : joined->notes) reader_notes.push_back(n);
  const std::string power_paths = Joined(args.power_paths, ", "), load_paths = Joined(args.load_paths, ", ");
  CalibrationOptions options;
  options.hold_back_fraction = *hold_back;
  options.sensor_average_s = sensor_average_s;
  Result<CalibrationResult> r = CalibratePowerModel(*joined, *base, options);
  if (!r.ok()) {
    for (const std::string& n : reader_notes) ReportWarning(name, n);
    return ReportError(name, Error{power_paths + " and " + load_paths + ": " + r.error().message});
  }

  const std::string server = runs.front().server;
  r->config.source = "calibrated to " + server + " from " + power_paths + " and " + load_paths;
  CalibrationProvenance p;
  p.command = "wattcut polca calibrate";
  for (size_t i = 0; i < args.power_paths.size(); ++i) {
    p.command += " --power " + args.power_paths[i] + " --load " + args.load_paths[i];
  }
  p.command += (args.config_path.empty() ? " --gpu " + args.gpu : " --config " + args.config_path) +
               PowerFileOptionsText(args.power) + (args.server.empty() ? "" : " --server " + args.server) +
               " --hold-back " + args.hold_back;
  p.server = server;
  p.power_source = power_paths;
  p.power_format = runs.front().power_format;
  p.power_field = runs.front().power_field;
  p.load_source = load_paths;
  p.load_format = runs.front().load_format;
  p.base_config = base->source;
  p.reader_notes = reader_notes;
  if (!joined->has_server_power) {
    r->notes.insert(r->notes.begin(),
                    "server power here comes from the GPUs alone: the non-GPU part (server.*) is "
                    "the base config's model (" +
                        base->source + ")");
  }
  Status st = out->Write("calibrated.conf", CalibratedConfigText(*r, p));
  if (st.ok()) st = out->Write("calibration.json", CalibrationJson(*r, p).dump(2) + "\n");
  if (st.ok()) st = out->Write("calibration_power.svg", CalibrationPowerSvg(*r));
  if (st.ok()) st = out->Write("calibration_error.svg", CalibrationErrorSvg(*r));
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());
  for (const std::string& n : p.reader_notes) ReportWarning(name, n);
  for (const std::string& n : r->notes) ReportWarning(name, n);
  std::printf("calibrated %s (%d GPUs%s) from %s and %s:\n%s", server.c_str(), joined->gpus,
              runs.size() > 1 ? (", " + std::to_string(runs.size()) + " runs").c_str() : "", power_paths.c_str(),
              load_paths.c_str(), CalibrationSummaryText(*r).c_str());
  std::printf("wrote %s/calibrated.conf\n", DisplayPath(args.out_dir).c_str());
  return 0;
}

}  // namespace

void AddPolcaCalibrateCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* c =
      polca.add_subcommand("calibrate", "Fit the per-GPU power model to one server's nvidia-smi power and vLLM load");
  c->add_option("--power", args->power_paths,
                "The server's GPU power: nvidia-smi --query-gpu CSV, a Prometheus query_range answer (DCGM) or the "
                "agent's readings stream; a file or a folder. Repeat it, with --load, for several runs of one setup")
      ->required()
      ->take_all()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->expected(1);
  AddPowerFileOptions(*c, args->power);
  c->add_option("--load", args->load_paths,
                "vLLM's or SGLang's metrics (CSV time,vllm:num_requests_running,... or a Prometheus query_range "
                "answer), or a request log (TIMESTAMP,ContextTokens,GeneratedTokens,server); one per --power")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->expected(1);
  c->add_option("--load-label", args->load_label, "Prometheus load: the label naming a series' server")
      ->capture_default_str();
  c->add_option("--gpu", args->gpu, "Built-in base config when no --config is given: a100, h100 or mi300x")
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
