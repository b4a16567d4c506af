#include "wattcut/polca/calibration_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/plot/chart.h"

namespace wattcut::polca {
namespace {

std::string Value(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

nlohmann::json StatsJson(const WindowErrorStats& s) {
  return {{"windows", s.windows},        {"mean_abs_w", s.mean_abs_w},       {"p99_abs_w", s.p99_abs_w},
          {"max_abs_w", s.max_abs_w},    {"mean_signed_w", s.mean_signed_w}, {"mean_abs_tdp", s.mean_abs_tdp},
          {"p99_abs_tdp", s.p99_abs_tdp}};
}

std::string KindName(WindowKind k) {
  switch (k) {
    case WindowKind::kIdle:
      return "idle";
    case WindowKind::kPrefill:
      return "prefill";
    case WindowKind::kDecode:
      return "decode";
  }
  return "decode";
}

std::string Percent(double fraction, int decimals = 1) { return FixedDecimals(100 * fraction, decimals) + " %"; }

// The engine-state model's terms, as fitted.
std::string EngineStateText(const CalibrationResult& r) {
  const BusyPowerLevels& l = r.busy;
  return "engine-state: idle " + FixedDecimals(l.idle_w, 1) + " W, busy step " + FixedDecimals(l.busy_step_w, 1) +
         " W, " + FixedDecimals(l.prompt_j_per_token, 4) + " J per prompt token and " +
         GeneralText(l.prompt_j_per_token_squared) + " J per token squared (spread over " +
         FixedDecimals(1e3 * r.prefill_s_per_token, 3) + " ms a token), " + FixedDecimals(l.generation_j_per_token, 4) +
         " J per generated token, " + FixedDecimals(l.w_per_running_request, 2) +
         " W per running request beyond the first, " + FixedDecimals(l.j_per_engine_step, 3) + " J per engine step";
}

}  // namespace

std::string CalibratedConfigText(const CalibrationResult& r, const CalibrationProvenance& p) {
  std::string out = "# Calibrated by `" + p.command + "`\n";
  out += "#   server " + p.server + "; power " + p.power_source + " (" + p.power_format + ", " + p.power_field + ")\n";
  out += "#   load " + p.load_source + " (" + p.load_format + "); base config " + p.base_config + "\n";
  out += "#   fit " + FixedDecimals(r.fit_s, 0) + " s, held back " + FixedDecimals(r.holdout_s, 0) +
         " s: 1 s GPU power error mean " + FixedDecimals(r.holdout_1s.mean_abs_w, 1) + " W (" +
         Percent(r.holdout_1s.mean_abs_tdp) + " of TDP), P99 " + FixedDecimals(r.holdout_1s.p99_abs_w, 1) + " W (" +
         Percent(r.holdout_1s.p99_abs_tdp) + " of TDP); energy " + Percent(r.holdout_energy_error, 2) +
         " (calibration.json)\n";
  if (r.model == "busy") out += "#   model: " + EngineStateText(r) + "\n";
  for (const std::string& n : r.notes) out += "#   note: " + n + "\n";
  const std::string body = FormatConfig(r.config);
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    for (const FittedParameter& f : r.parameters) {
      if (line.rfind(f.key + " = ", 0) != 0) continue;
      out += f.measured ? "# measured (base " + Value(f.base_value) + ")" : "# " + f.note;
      if (f.measured && !f.note.empty()) out += ": " + f.note;
      out += "\n";
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json CalibrationJson(const CalibrationResult& r, const CalibrationProvenance& p) {
  nlohmann::json params = nlohmann::json::array();
  for (const FittedParameter& f : r.parameters) {
    params.push_back(
        {{"key", f.key}, {"value", f.value}, {"base_value", f.base_value}, {"measured", f.measured}, {"note", f.note}});
  }
  return {
      {"command", p.command},
      {"server", p.server},
      {"power", {{"source", p.power_source}, {"format", p.power_format}, {"field", p.power_field}}},
      {"load", {{"source", p.load_source}, {"format", p.load_format}}},
      {"base_config", p.base_config},
      {"model", r.model},
      {"engine_state",
       {{"idle_w", r.busy.idle_w},
        {"busy_step_w", r.busy.busy_step_w},
        {"prompt_j_per_token", r.busy.prompt_j_per_token},
        {"prompt_j_per_token_squared", r.busy.prompt_j_per_token_squared},
        {"prefill_s_per_token", r.prefill_s_per_token},
        {"generation_j_per_token", r.busy.generation_j_per_token},
        {"w_per_running_request", r.busy.w_per_running_request},
        {"j_per_engine_step", r.busy.j_per_engine_step},
        {"w_while_stalled", r.busy.w_while_stalled}}},
      {"parameters", params},
      {"clocks_mhz", r.clocks_mhz},
      {"fit",
       {{"from_s", r.fit_from_s},
        {"to_s", r.fit_to_s},
        {"seconds", r.fit_s},
        {"windows", r.fit_windows},
        {"rms_w", r.fit_rms_w}}},
      {"held_back",
       {{"from_s", r.holdout_from_s},
        {"to_s", r.holdout_to_s},
        {"seconds", r.holdout_s},
        {"all", StatsJson(r.holdout)},
        {"one_second", StatsJson(r.holdout_1s)},
        {"idle", StatsJson(r.holdout_idle)},
        {"prefill", StatsJson(r.holdout_prefill)},
        {"decode", StatsJson(r.holdout_decode)},
        {"minutes", r.holdout_minutes},
        {"energy_per_minute_mean_abs", r.energy_per_minute_mean_abs},
        {"energy_per_minute_max_abs", r.energy_per_minute_max_abs},
        {"energy_error", r.holdout_energy_error}}},
      {"overfull_window_share", r.overfull_share},
      {"notes", r.notes},
      {"reader_notes", p.reader_notes},
  };
}

std::string CalibrationPowerSvg(const CalibrationResult& r, double minutes) {
  std::vector<plot::Point> measured, modelled;
  if (!r.held_back.empty()) {
    const double t0 = r.held_back.front().time_s - r.held_back.front().length_s;
    for (const PredictedWindow& w : r.held_back) {
      const double x = (w.time_s - t0) / 60;
      if (x > minutes) break;
      measured.push_back({x, w.measured_w});
      modelled.push_back({x, w.predicted_w});
    }
  }
  plot::Chart chart("Measured and modelled GPU power, held-back part (first " + FixedDecimals(minutes, 0) +
                        " minutes; P99 error " + FixedDecimals(r.holdout.p99_abs_w, 1) + " W)",
                    plot::AxisSpec("minutes into the held-back part", 0, minutes), plot::AxisSpec("power per GPU (W)"));
  chart.set_size(1000, 460);
  plot::Series m("measured", measured, plot::SeriesKind::kStep, "#7f7f7f");
  m.width = 1.2;
  chart.AddSeries(m);
  plot::Series p("modelled from the load", modelled, plot::SeriesKind::kStep, "#1f77b4");
  p.width = 1.2;
  p.dash = "4 2";
  chart.AddSeries(p);
  chart.AddReferenceLine({plot::Orientation::kHorizontal, r.config.gpu.tdp_w, "TDP", "#c00000"});
  return chart.ToSvg();
}

std::string CalibrationErrorSvg(const CalibrationResult& r) {
  plot::Chart chart("Held-back windows: distribution of the absolute power error",
                    plot::AxisSpec("absolute error per GPU (% of TDP)", 0, std::nullopt),
                    plot::AxisSpec("share of windows at or below (%)", 0, 100));
  const char* colors[] = {"#2ca02c", "#d62728", "#1f77b4"};
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<double> e;
    for (const PredictedWindow& w : r.held_back) {
      if (static_cast<int>(w.kind) == kind)
        e.push_back(100 * std::abs(w.predicted_w - w.measured_w) / r.config.gpu.tdp_w);
    }
    if (e.empty()) continue;
    std::sort(e.begin(), e.end());
    std::vector<plot::Point> cdf;
    const size_t stride = std::max<size_t>(1, e.size() / 500);
    for (size_t i = 0; i < e.size(); i += stride) cdf.push_back({e[i], 100.0 * (i + 1) / e.size()});
    cdf.push_back({e.back(), 100});
    chart.AddSeries({KindName(static_cast<WindowKind>(kind)) + " (" + std::to_string(e.size()) + " windows)", cdf,
                     plot::SeriesKind::kLine, colors[kind]});
  }
  chart.AddReferenceLine({plot::Orientation::kHorizontal, 99, "P99", "#555555"});
  chart.AddReferenceLine({plot::Orientation::kVertical, 100 * r.holdout.p99_abs_tdp,
                          "P99 all " + FixedDecimals(100 * r.holdout.p99_abs_tdp, 1) + " %", "#555555"});
  return chart.ToSvg();
}

std::string CalibrationSummaryText(const CalibrationResult& r) {
  std::string out;
  for (const FittedParameter& f : r.parameters) {
    out += "  " + f.key + " = " + Value(f.value) + (f.measured ? "" : "  (" + f.note + ")") + "\n";
  }
  out += "model: " + (r.model == "busy" ? EngineStateText(r) : std::string("phase levels")) + "\n";
  out += "held back " + FixedDecimals(r.holdout_s, 0) + " s: 1 s GPU power error mean " +
         Percent(r.holdout_1s.mean_abs_tdp) + " of TDP, P99 " + Percent(r.holdout_1s.p99_abs_tdp) + " of TDP (" +
         std::to_string(r.holdout_1s.windows) + " seconds); energy " + Percent(r.holdout_energy_error, 2) + "\n";
  out += "  per load window (" + std::to_string(r.holdout.windows) + " windows): GPU power error mean " +
         FixedDecimals(r.holdout.mean_abs_w, 1) + " W, P99 " + FixedDecimals(r.holdout.p99_abs_w, 1) +
         " W = " + Percent(r.holdout.p99_abs_tdp) + " of TDP (idle " + FixedDecimals(r.holdout_idle.p99_abs_w, 1) +
         ", prefill " + FixedDecimals(r.holdout_prefill.p99_abs_w, 1) + ", decode " +
         FixedDecimals(r.holdout_decode.p99_abs_w, 1) + " W); energy per minute " +
         Percent(r.energy_per_minute_mean_abs, 2) + " mean, " + Percent(r.energy_per_minute_max_abs, 2) + " worst\n";
  return out;
}

}  // namespace wattcut::polca
