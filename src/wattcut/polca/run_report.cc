#include "wattcut/polca/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/polca/row_charts.h"

namespace wattcut::polca {
namespace {

using nlohmann::json;

Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{dir + ": cannot create output folder: " + ec.message()};
  return Status::Ok();
}

Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot open file for writing"};
  out << text;
  out.close();
  if (!out) return Error{path + ": write error"};
  return Status::Ok();
}

std::string Percent(double fraction, int decimals = 1) { return FixedDecimals(100 * fraction, decimals) + " %"; }

json PriorityJson(const PriorityMetrics& m) {
  return {{"servers", m.servers},
          {"completed_requests", m.completed},
          {"latency_p50_s", m.latency_p50_s},
          {"latency_p99_s", m.latency_p99_s},
          {"generated_tokens", m.generated_tokens},
          {"tokens_per_s", m.tokens_per_s},
          {"busy_server_s", m.busy_server_s}};
}

json ImpactJson(const PriorityImpact& i) {
  return {{"p50_latency_impact", i.p50_latency},
          {"p99_latency_impact", i.p99_latency},
          {"throughput_change", i.throughput}};
}

json RunJson(const RowRunResult& r) {
  return {{"policy", PolicyName(r.policy)},
          {"servers", r.servers},
          {"brake_events", r.brake_events},
          {"brake_active_s", r.brake_active_s},
          {"time_in_state_s",
           {{"normal", r.level_s[0]}, {"t1", r.level_s[1]}, {"t2-low", r.level_s[2]}, {"t2-high", r.level_s[3]}}},
          {"row_power_fraction",
           {{"max", r.power_max}, {"p99", r.power_p99}, {"p50", r.power_p50}, {"mean", r.power_mean}}},
          {"seconds_above_budget", r.seconds_above_budget},
          {"energy_kwh", r.energy_kwh},
          {"arrivals", r.arrivals},
          {"unfinished_requests", r.unfinished},
          {"high_priority", PriorityJson(r.high)},
          {"low_priority", PriorityJson(r.low)}};
}

json ContextJson(const RunContext& c) {
  return {
      {"command", c.command},
      {"config", c.config->source},
      {"gpu", c.config->gpu.name},
      {"model", c.config->service.model},
      {"trace", {{"path", c.trace->name()}, {"requests", c.trace->requests().size()}, {"span_s", c.trace->span_s()}}},
      {"seed", c.seed},
      {"baseline_servers", c.config->row.baseline_servers},
      {"row_budget_w", c.config->row_budget_w()},
      {"slos",
       {{"high_p50_latency_impact_below", 0.01},
        {"high_p99_latency_impact_below", 0.05},
        {"low_p50_latency_impact_below", 0.05},
        {"low_p99_latency_impact_below", 0.50}}},
      {"wall_s", c.wall_s}};
}

const std::string kRunCsvHeader =
    "policy,servers,added_fraction,brake_events,brake_active_s,normal_s,t1_s,t2_low_s,t2_high_s,power_max,power_p99,"
    "power_mean,energy_kwh,high_p50_impact,high_p99_impact,high_throughput_change,low_p50_impact,low_p99_impact,"
    "low_throughput_change,meets_slos\n";

std::string RunCsvRow(const RowRunResult& r, double added, const RunImpact& i, bool meets) {
  std::string s = PolicyName(r.policy) + "," + std::to_string(r.servers) + "," + GeneralText(added) + "," +
                  std::to_string(r.brake_events) + "," + GeneralText(r.brake_active_s);
  for (double v : r.level_s) s += "," + GeneralText(v);
  s += "," + GeneralText(r.power_max) + "," + GeneralText(r.power_p99) + "," + GeneralText(r.power_mean) + "," +
       GeneralText(r.energy_kwh);
  for (double v : {i.high.p50_latency, i.high.p99_latency, i.high.throughput, i.low.p50_latency, i.low.p99_latency,
                   i.low.throughput}) {
    s += "," + GeneralText(v);
  }
  return s + "," + (meets ? "true" : "false") + "\n";
}

}  // namespace

Status WriteRunReport(const std::string& dir, const RunContext& context, const RowRunResult& run,
                      const RowRunResult& reference) {
  Status st = EnsureDir(dir);
  if (!st.ok()) return st;
  const RunImpact impact = CompareRuns(run, reference);
  const double baseline = context.config->row.baseline_servers;
  const double added = run.servers / baseline - 1;
  json summary = ContextJson(context);
  summary["duration_s"] = run.duration_s;
  summary["added_fraction"] = added;
  summary["run"] = RunJson(run);
  summary["run"]["high_priority"].update(ImpactJson(impact.high));
  summary["run"]["low_priority"].update(ImpactJson(impact.low));
  summary["unconstrained"] = RunJson(reference);
  summary["meets_slos"] = MeetsSlos(impact);
  summary["simulated_s_per_wall_s"] = context.wall_s > 0 ? 2 * run.duration_s / context.wall_s : 0;
  st = WriteText(dir + "/summary.json", summary.dump(2) + "\n");
  if (st.ok()) st = WriteText(dir + "/run.csv", kRunCsvHeader + RunCsvRow(run, added, impact, MeetsSlos(impact)));
  if (st.ok()) st = WriteText(dir + "/config.conf", FormatConfig(*context.config));
  if (st.ok()) {
    const double period = context.config->control.telemetry_period_s;
    const size_t per_minute = std::max<size_t>(1, static_cast<size_t>(std::lround(60 / period)));
    std::string csv = "minute_end_s,power_mean,power_max,unconstrained_mean,unconstrained_max\n";
    for (size_t i = 0; i < run.power_samples.size(); i += per_minute) {
      auto stats = [&](const std::vector<float>& v) {
        double sum = 0, mx = 0;
        size_t end = std::min(v.size(), i + per_minute);
        for (size_t k = i; k < end; ++k) {
          sum += v[k];
          mx = std::max(mx, static_cast<double>(v[k]));
        }
        return std::pair{end > i ? sum / static_cast<double>(end - i) : 0.0, mx};
      };
      auto [mean, mx] = stats(run.power_samples);
      auto [rmean, rmx] = stats(reference.power_samples);
      csv += GeneralText(static_cast<double>(std::min(run.power_samples.size(), i + per_minute)) * period) + "," +
             GeneralText(mean) + "," + GeneralText(mx) + "," + GeneralText(rmean) + "," + GeneralText(rmx) + "\n";
    }
    st = WriteText(dir + "/row_power.csv", csv);
  }
  if (st.ok()) st = WriteText(dir + "/row_power.svg", RowPowerChartSvg(*context.config, run, reference));
  if (st.ok()) st = WriteText(dir + "/power_cdf.svg", PowerCdfChartSvg(*context.config, run, reference));
  return st;
}

std::string SweepMarkdown(const SweepResult& sweep) {
  std::string md =
      "| added | servers | policy | brake events | time above T1 | high P50 / P99 impact | low P50 / P99 impact | "
      "low throughput | holds |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const SweepPoint& p : sweep.points) {
    const RowRunResult& r = p.run;
    double above = (r.level_s[1] + r.level_s[2] + r.level_s[3]) / r.duration_s;
    md += "| +" + FixedDecimals(100 * p.added_fraction, 0) + " % | " + std::to_string(p.servers) + " | " +
          PolicyName(r.policy) + " | " + std::to_string(r.brake_events) + " | " +
          (r.policy == PolicyKind::kBrakeOnly ? std::string("-") : Percent(above, 0)) + " | " +
          Percent(p.impact.high.p50_latency) + " / " + Percent(p.impact.high.p99_latency) + " | " +
          Percent(p.impact.low.p50_latency) + " / " + Percent(p.impact.low.p99_latency) + " | " +
          Percent(p.impact.low.throughput, 2) + " | " + (p.holds ? "yes" : "no") + " |\n";
  }
  return md;
}

Status WriteSweepReport(const std::string& dir, const RunContext& context, const SweepResult& sweep) {
  Status st = EnsureDir(dir);
  if (!st.ok()) return st;
  json summary = ContextJson(context);
  summary["duration_s"] = sweep.references.empty() ? 0 : sweep.references.front().duration_s;
  summary["simulated_s"] = sweep.simulated_s;
  summary["simulated_s_per_wall_s"] = context.wall_s > 0 ? sweep.simulated_s / context.wall_s : 0;
  json points = json::array();
  for (const SweepPoint& p : sweep.points) {
    json j = RunJson(p.run);
    j["added_fraction"] = p.added_fraction;
    j["high_priority"].update(ImpactJson(p.impact.high));
    j["low_priority"].update(ImpactJson(p.impact.low));
    j["meets_slos"] = p.meets_slos;
    j["holds"] = p.holds;
    points.push_back(j);
  }
  summary["points"] = points;
  json references = json::array();
  for (const RowRunResult& r : sweep.references) references.push_back(RunJson(r));
  summary["unconstrained"] = references;
  json held = json::object();
  const std::vector<std::string> order = SweepPolicyNames(sweep);
  for (size_t i = 0; i < order.size() && i < sweep.max_added_held.size(); ++i) held[order[i]] = sweep.max_added_held[i];
  summary["max_added_fraction_held"] = held;
  st = WriteText(dir + "/summary.json", summary.dump(2) + "\n");
  if (st.ok()) {
    std::string csv = kRunCsvHeader;
    for (const SweepPoint& p : sweep.points) csv += RunCsvRow(p.run, p.added_fraction, p.impact, p.meets_slos);
    st = WriteText(dir + "/sweep.csv", csv);
  }
  if (st.ok()) st = WriteText(dir + "/sweep.md", SweepMarkdown(sweep));
  if (st.ok()) st = WriteText(dir + "/config.conf", FormatConfig(*context.config));
  if (st.ok()) st = WriteText(dir + "/sweep_brakes.svg", SweepBrakesChartSvg(*context.config, sweep));
  if (st.ok()) st = WriteText(dir + "/sweep_latency_high.svg", SweepLatencyChartSvg(sweep, PriorityClass::kHigh));
  if (st.ok()) st = WriteText(dir + "/sweep_latency_low.svg", SweepLatencyChartSvg(sweep, PriorityClass::kLow));
  return st;
}

}  // namespace wattcut::polca
