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
#include "wattcut/polca/calibration_report.h"
#include "wattcut/polca/calibration_windows.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_calibration.h"
#include "wattcut/polca/request_log.h"
#include "wattcut/polca/request_log_load.h"
#include "wattcut/telemetry/nvidia_smi_csv_reader.h"
#include "wattcut/telemetry/vllm_metrics_csv_reader.h"

namespace wattcut::cli {
namespace {

using namespace wattcut::polca;

struct CalibrateArgs {
  std::string power_path;
  std::string load_path;
  std::string gpu = "a100";
  std::string config_path;
  std::string server;
  std::string utc_offset;
  std::string hold_back = "33%";
  std::string out_dir;
  bool overwrite = false;
};

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
  telemetry::NvidiaSmiReadOptions power_options;
  power_options.server = args.server;
  if (!args.utc_offset.empty()) {
    Result<int> offset = telemetry::ParseUtcOffset(args.utc_offset);
    if (!offset.ok()) return ReportError(name, offset.error());
    power_options.utc_offset_minutes = *offset;
  }
  Result<std::string> power_text = CsvTable::ReadText(args.power_path, telemetry::kMaxTelemetryFileBytes);
  if (!power_text.ok()) return ReportError(name, power_text.error());
  if (!telemetry::LooksLikeNvidiaSmiCsv(*power_text)) {
    return ReportError(name, Error{args.power_path +
                                   ": not nvidia-smi's CSV (its header starts 'timestamp, ...' and names power.draw): "
                                   "record it with nvidia-smi --query-gpu=timestamp,index,power.draw.average,"
                                   "clocks.sm --format=csv -lms 250"});
  }
  Result<telemetry::PowerTelemetry> power = telemetry::ParseNvidiaSmiCsv(*power_text, args.power_path, power_options);
  if (!power.ok()) return ReportError(name, power.error());
  const std::string server = power->gpus.front().server;
  Result<std::string> load_text = CsvTable::ReadText(args.load_path, telemetry::kMaxTelemetryFileBytes);
  if (!load_text.ok()) return ReportError(name, load_text.error());
  Result<telemetry::ServingLoadTelemetry> load = Error{""};
  if (LooksLikeRequestLog(*load_text)) {
    Result<ServerRequestLog> log = ParseRequestLog(*load_text, args.load_path, server);
    if (!log.ok()) return ReportError(name, log.error());
    load = LoadFromRequestLog(*log, power->gpus, *base);
  } else {
    load = telemetry::ParseVllmMetricsCsv(*load_text, args.load_path, server);
  }
  if (!load.ok()) return ReportError(name, load.error());

  WindowOptions window_options;
  window_options.sensor_average_s = SensorAverageSecondsFor(power->power_field);
  window_options.max_power_gap_s = 1.0;
  Result<CalibrationWindows> windows = BuildCalibrationWindows(power->gpus, nullptr, load->servers[0], window_options);
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
              (args.utc_offset.empty() ? "" : " --utc-offset " + args.utc_offset) + " --hold-back " + args.hold_back;
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
  r->notes.insert(r->notes.begin(),
                  "server power here comes from the GPUs alone: the non-GPU part (server.*) is "
                  "the base config's model (" +
                      base->source + ")");
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
  c->add_option("--power", args->power_path, "nvidia-smi --query-gpu=... --format=csv output of the server")
      ->required();
  c->add_option("--load", args->load_path,
                "vLLM metrics CSV of the same server (time,vllm:num_requests_running,...), or a request log "
                "(TIMESTAMP,ContextTokens,GeneratedTokens,server)")
      ->required();
  c->add_option("--gpu", args->gpu, "Built-in base config when no --config is given: a100 or h100")
      ->capture_default_str();
  c->add_option("--config", args->config_path, "Base config: the served model's timing and what is not fitted");
  c->add_option("--server", args->server, "The server's name (default: the power file's name)");
  c->add_option("--utc-offset", args->utc_offset, "The offset of nvidia-smi's local time, +HH:MM, -HH:MM or Z");
  c->add_option("--hold-back", args->hold_back, "Share of the run, at its end, held back to check the fit")
      ->capture_default_str();
  c->add_option("--out", args->out_dir, "Output directory")->required();
  c->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  c->callback([args, &status] { status.exit_code = RunCalibrate(*args); });
}

}  // namespace wattcut::cli
