// `wattcut polca replay --power-trace telemetry.csv --config row.conf --out DIR`: the row power
// policy over recorded per-server power, with the effect of its ceilings estimated through the
// config's power model (polca/power_trace_replay.h). Writes, like `polca simulate`:
//   DIR/summary.json   time per state, commands per class, brake engagements, row power before and
//                      after (peak, P99 as fractions of the budget; energy), gaps and warnings
//   DIR/row_power.csv  one row per telemetry period: time, power before and after, the state
//   DIR/commands.csv   every command the policy issued
//   DIR/row_power.svg  row power before and after, the thresholds, the time above T1 and T2
//   DIR/config.conf    the config the replay ran with
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/cli/command.h"
#include "wattcut/cli/output_directory.h"
#include "wattcut/cli/power_file_arguments.h"
#include "wattcut/plot/chart.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_trace.h"
#include "wattcut/polca/power_trace_replay.h"
#include "wattcut/polca/telemetry_power_trace.h"
#include "wattcut/telemetry/power_telemetry_reader.h"

namespace wattcut::cli {
namespace {

using namespace wattcut::polca;

struct ReplayArgs {
  std::string trace_path;
  PowerFileArguments power;
  std::string config_path;
  std::string gpu = "a100";
  std::string policy = "polca";
  double gap_s = 0;
  bool in_band = false;
  std::string out_dir;
  bool overwrite = false;
};

std::string StateName(const ReplayPeriod& p) { return LevelName(p.level); }

std::string Num(double v, int decimals) { return FixedDecimals(v, decimals); }

std::string RowPowerCsv(const ReplayResult& r) {
  std::string out = "time_s,before_w,after_w,before_fraction,after_fraction,state,brake\n";
  out.reserve(out.size() + r.periods.size() * 56);
  for (const ReplayPeriod& p : r.periods) {
    out += Num(p.time_s, 3) + "," + Num(p.before_w, 1) + "," + Num(p.after_w, 1) + "," +
           Num(p.before_w / r.budget_w, 5) + "," + Num(p.after_w / r.budget_w, 5) + "," + StateName(p) + "," +
           (p.brake ? "1" : "0") + "\n";
  }
  return out;
}

std::string CommandsCsv(const ReplayResult& r) {
  std::string out = "issued_at_s,effective_at_s,target,lock_mhz,cap_w,brake_on\n";
  for (const ControlCommand& c : r.commands) {
    out += Num(c.issued_at_s, 3) + "," + Num(c.effective_at_s, 3) + "," + TargetName(c.target) + "," +
           Num(c.setting.lock_mhz, 0) + "," + Num(c.setting.cap_w, 0) + "," + (c.brake_on ? "1" : "0") + "\n";
  }
  return out;
}

// Where the servers' power came from, for summary.json and stdout.
struct PowerOrigin {
  std::string format = "wattcut";
  std::string power_field;
  int measured_servers = 0;
  int modelled_servers = 0;
  std::vector<std::string> notes;
};

std::string ServerPowerFrom(const PowerOrigin& origin) {
  if (origin.format == "wattcut") return "the trace's server power";
  if (origin.modelled_servers == 0) return "measured (whole-server series)";
  const std::string model = "server power from GPUs alone: non-GPU part from the config's model";
  if (origin.measured_servers == 0) return model;
  return std::to_string(origin.measured_servers) + " servers measured; " + std::to_string(origin.modelled_servers) +
         " servers' " + model;
}

nlohmann::json Summary(const std::string& command, const PolcaConfig& config, const PowerTrace& trace,
                       const PowerOrigin& origin, const ReplayResult& r) {
  nlohmann::json gaps = nlohmann::json::array();
  for (const TraceGap& g : r.gaps) gaps.push_back({{"server", g.server}, {"from_s", g.from_s}, {"to_s", g.to_s}});
  const double duration_s = static_cast<double>(r.periods.size()) * r.period_s;
  return {
      {"command", command},
      {"config", config.source},
      {"power_trace", trace.name()},
      {"power_trace_format", origin.format},
      {"power_field", origin.power_field},
      {"server_power", ServerPowerFrom(origin)},
      {"telemetry_notes", origin.notes},
      {"trace_start", trace.start_time()},
      {"trace_sample_interval_s", trace.sample_interval_s()},
      {"policy", PolicyName(r.policy)},
      {"servers", r.servers},
      {"low_priority_servers", r.low_priority_servers},
      {"priorities_from", r.priorities_from_trace ? "trace" : "row.low_priority_share"},
      {"row_budget_w", r.budget_w},
      {"telemetry_period_s", r.period_s},
      {"periods", r.periods.size()},
      {"duration_s", duration_s},
      {"gap_s", r.gap_s},
      {"time_in_state_s",
       {{"normal", r.level_s[0]}, {"t1", r.level_s[1]}, {"t2-low", r.level_s[2]}, {"t2-high", r.level_s[3]}}},
      {"brake_s", r.brake_s},
      {"commands", {{"low", r.low_commands}, {"high", r.high_commands}, {"brake", r.brake_commands}}},
      {"brake_engagements", r.brake_engagements},
      {"row_power",
       {{"before", {{"peak", r.before_peak}, {"p99", r.before_p99}, {"energy_kwh", r.before_energy_kwh}}},
        {"after", {{"peak", r.after_peak}, {"p99", r.after_p99}, {"energy_kwh", r.after_energy_kwh}}}}},
      {"gaps", gaps},
      {"warnings", r.warnings},
  };
}

std::string ChartSvg(const PolcaConfig& config, const ReplayResult& r) {
  const double span = r.periods.empty() ? 0 : r.periods.back().time_s;
  const double unit = span > 2 * 86400 ? 86400 : span > 2 * 3600 ? 3600 : 60;
  const std::string unit_name = unit == 86400 ? "days" : unit == 3600 ? "hours" : "minutes";
  plot::Chart chart("Row power replayed: " + PolicyName(r.policy) + ", " + std::to_string(r.servers) + " servers",
                    plot::AxisSpec("time (" + unit_name + ")", 0, std::max(span, r.period_s) / unit),
                    plot::AxisSpec("row power (% of budget)"));
  chart.set_size(1000, 460);
  // At most about 4,000 points per line: each keeps the highest value of its stretch of periods.
  const size_t stride = std::max<size_t>(1, r.periods.size() / 4000 + 1);
  std::vector<plot::Point> before, after;
  for (size_t i = 0; i < r.periods.size(); i += stride) {
    double b = 0, a = 0;
    const size_t end = std::min(r.periods.size(), i + stride);
    for (size_t j = i; j < end; ++j) {
      b = std::max(b, r.periods[j].before_w);
      a = std::max(a, r.periods[j].after_w);
    }
    before.push_back({r.periods[i].time_s / unit, 100 * b / r.budget_w});
    after.push_back({r.periods[i].time_s / unit, 100 * a / r.budget_w});
  }
  // The time above T1 and T2 (the policy's state), shaded.
  auto shade = [&](PolicyLevel from, const std::string& color) {
    double start = -1;
    for (const ReplayPeriod& p : r.periods) {
      const bool in = p.level >= from;
      if (in && start < 0) start = p.time_s;
      if (!in && start >= 0) {
        chart.AddBand({plot::Orientation::kVertical, start / unit, p.time_s / unit, "", color});
        start = -1;
      }
    }
    if (start >= 0) chart.AddBand({plot::Orientation::kVertical, start / unit, span / unit, "", color});
  };
  if (r.policy != PolicyKind::kNone && r.policy != PolicyKind::kBrakeOnly) {
    shade(PolicyLevel::kT1, "#f2c94c");
    shade(PolicyLevel::kT2Low, "#eb5757");
  }
  plot::Series recorded("recorded (before)", before, plot::SeriesKind::kLine, "#b0b0b0");
  recorded.width = 1;
  chart.AddSeries(recorded);
  plot::Series estimated("estimated under the ceilings (after)", after, plot::SeriesKind::kLine, "#1f77b4");
  estimated.width = 1;
  chart.AddSeries(estimated);
  std::vector<plot::Point> engagements;
  bool was = false;
  for (const ReplayPeriod& p : r.periods) {
    if (p.brake && !was) engagements.push_back({p.time_s / unit, 100 * p.after_w / r.budget_w});
    was = p.brake;
  }
  if (!engagements.empty()) {
    chart.AddSeries(
        {"brake (" + std::to_string(engagements.size()) + ")", engagements, plot::SeriesKind::kScatter, "#c00000"});
  }
  const PolicySpec& p = config.policy;
  chart.AddReferenceLine(
      {plot::Orientation::kHorizontal, 100 * p.t1, "T1 " + FixedDecimals(100 * p.t1, 0) + " %", "#e6a100"});
  chart.AddReferenceLine(
      {plot::Orientation::kHorizontal, 100 * p.t2, "T2 " + FixedDecimals(100 * p.t2, 0) + " %", "#e05a00"});
  chart.AddReferenceLine(
      {plot::Orientation::kHorizontal, 100 * p.brake, "brake " + FixedDecimals(100 * p.brake, 0) + " %", "#c00000"});
  return chart.ToSvg();
}

int RunReplay(const ReplayArgs& args) {
  const std::string name = "polca replay";
  Result<OutputDirectory> out = OutputDirectory::Create(args.out_dir, args.overwrite);
  if (!out.ok()) return ReportError(name, out.error());
  Result<PolcaConfig> config = args.config_path.empty() ? BuiltInConfig(args.gpu) : ReadConfigFile(args.config_path);
  if (!config.ok()) return ReportError(name, config.error());
  if (args.in_band) config->control.actuation_latency_s = 0.01;
  if (Status valid = Validate(*config); !valid.ok()) return ReportError(name, valid.error());
  Result<PolicyKind> policy = ParsePolicyKind(args.policy);
  if (!policy.ok()) return ReportError(name, policy.error());
  if (!(args.gap_s >= 0) || !std::isfinite(args.gap_s)) {
    return ReportError(name, Error{"--gap: expected seconds >= 0 (0: three telemetry periods)"});
  }
  Result<telemetry::PowerFormat> format = telemetry::ParsePowerFormat(args.power.format);
  if (!format.ok()) return ReportError(name, format.error().WithContext("--format: "));
  if (*format == telemetry::PowerFormat::kAuto) {
    // A file no other format claims is read as wattcut's CSV, whose reader says what is wrong
    // with it (a missing column, a gzip file, a missing file).
    Result<telemetry::PowerFormat> detected = telemetry::DetectPowerFormatOf(args.trace_path);
    std::error_code ec;
    if (!detected.ok() && std::filesystem::is_directory(args.trace_path, ec)) {
      return ReportError(name, detected.error());
    }
    format = detected.ok() ? *detected : telemetry::PowerFormat::kWattcut;
  }
  PowerOrigin origin;
  Result<PowerTrace> trace = Error{""};
  if (*format == telemetry::PowerFormat::kWattcut) {
    trace = PowerTrace::Read(args.trace_path);
  } else {
    Result<telemetry::PowerReadOptions> read = PowerReadOptionsFrom(args.power);
    if (!read.ok()) return ReportError(name, read.error());
    Result<telemetry::PowerTelemetry> power = telemetry::ReadPowerTelemetry(args.trace_path, *format, *read);
    if (!power.ok()) return ReportError(name, power.error());
    Result<TelemetryPowerTrace> converted = PowerTraceFromTelemetry(*power, config->server);
    if (!converted.ok()) return ReportError(name, converted.error());
    origin.format = power->format;
    origin.power_field = power->power_field;
    origin.measured_servers = converted->measured_servers;
    origin.modelled_servers = converted->modelled_servers;
    origin.notes = converted->notes;
    trace = std::move(converted->trace);
  }
  if (!trace.ok()) return ReportError(name, trace.error());
  ReplayOptions options;
  options.policy = *policy;
  options.gap_s = args.gap_s;
  Result<ReplayResult> r = ReplayPowerTrace(*trace, *config, options);
  if (!r.ok()) return ReportError(name, r.error());

  std::string command = "wattcut polca replay --power-trace " + args.trace_path;
  command += PowerFileOptionsText(args.power);
  command += args.config_path.empty() ? " --gpu " + args.gpu : " --config " + args.config_path;
  command += " --policy " + args.policy;
  if (args.gap_s > 0) command += " --gap " + FixedDecimals(args.gap_s, 3);
  if (args.in_band) command += " --in-band";
  command += " --out " + args.out_dir;
  Status st = out->Write("summary.json", Summary(command, *config, *trace, origin, *r).dump(2) + "\n");
  if (st.ok()) st = out->Write("row_power.csv", RowPowerCsv(*r));
  if (st.ok()) st = out->Write("commands.csv", CommandsCsv(*r));
  if (st.ok()) st = out->Write("row_power.svg", ChartSvg(*config, *r));
  if (st.ok()) st = out->Write("config.conf", FormatConfig(*config));
  if (st.ok()) st = out->Commit();
  if (!st.ok()) return ReportError(name, st.error());

  if (origin.format != "wattcut") {
    std::printf("%s power trace (%s): %s\n", origin.format.c_str(), PrintableText(origin.power_field, 200).c_str(),
                ServerPowerFrom(origin).c_str());
    for (const std::string& note : origin.notes) std::printf("note: %s\n", PrintableText(note, 400).c_str());
  }
  const size_t shown = std::min<size_t>(r->warnings.size(), 5);
  for (size_t i = 0; i < shown; ++i) ReportWarning(name, r->warnings[i]);
  if (r->warnings.size() > shown) {
    ReportWarning(name, std::to_string(r->warnings.size() - shown) + " more warnings in summary.json");
  }
  std::printf(
      "%s over %d servers (%d low priority), %zu periods of %g s: peak %.1f %% -> %.1f %% of %.0f W, "
      "P99 %.1f %% -> %.1f %%\n",
      PolicyName(r->policy).c_str(), r->servers, r->low_priority_servers, r->periods.size(), r->period_s,
      100 * r->before_peak, 100 * r->after_peak, r->budget_w, 100 * r->before_p99, 100 * r->after_p99);
  std::printf(
      "time at t1 %.0f s, t2-low %.0f s, t2-high %.0f s, braked %.0f s; commands low %d, high %d, brake %d; "
      "%d brake engagements; energy %.3f -> %.3f kWh; wrote %s\n",
      r->level_s[1], r->level_s[2], r->level_s[3], r->brake_s, r->low_commands, r->high_commands, r->brake_commands,
      r->brake_engagements, r->before_energy_kwh, r->after_energy_kwh, DisplayPath(args.out_dir).c_str());
  return 0;
}

}  // namespace

void AddPolcaReplayCommand(CLI::App& polca, CommandStatus& status) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* replay = polca.add_subcommand(
      "replay", "Run the row policy over recorded per-server power and estimate its ceilings' effect");
  replay
      ->add_option("--power-trace", args->trace_path,
                   "A file or a folder: CSV time,server,power_w[,priority], nvidia-smi --query-gpu CSV, a "
                   "Prometheus query_range answer, or the agent's readings stream (docs/polca.md)")
      ->required();
  AddPowerFileOptions(*replay, args->power);
  replay->add_option("--config", args->config_path, "Config file (see `wattcut polca config`)");
  replay->add_option("--gpu", args->gpu, "Built-in config when no --config is given: a100, h100 or mi300x")
      ->capture_default_str();
  replay->add_option("--policy", args->policy, "polca, headroom, brake-only, uniform-cap, power-cap or none")
      ->capture_default_str();
  replay->add_option("--gap", args->gap_s,
                     "Seconds without a reading after which a server counts at its peak and is reported "
                     "(default: 3 telemetry periods)");
  replay->add_flag("--in-band", args->in_band, "In-band (NVML, 10 ms) clock control instead of the config's latency");
  replay->add_option("--out", args->out_dir, "Output directory")->required();
  replay->add_flag("--overwrite", args->overwrite, "Replace DIR if it exists and is not empty");
  replay->callback([args, &status] { status.exit_code = RunReplay(*args); });
}

}  // namespace wattcut::cli
