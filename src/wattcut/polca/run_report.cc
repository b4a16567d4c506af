#include "wattcut/polca/run_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/plot/chart.h"
#include "wattcut/plot/color.h"

namespace wattcut::polca {
namespace {

using nlohmann::json;
namespace plot = wattcut::plot;

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
  return {{"p50_latency_impact", i.p50_latency}, {"p99_latency_impact", i.p99_latency}, {"throughput_change", i.throughput}};
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
  return {{"command", c.command},
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
  std::string s = PolicyName(r.policy) + "," + std::to_string(r.servers) + "," + FixedDecimals(added, 4) + "," +
                  std::to_string(r.brake_events) + "," + FixedDecimals(r.brake_active_s, 1);
  for (double v : r.level_s) s += "," + FixedDecimals(v, 1);
  s += "," + FixedDecimals(r.power_max, 4) + "," + FixedDecimals(r.power_p99, 4) + "," + FixedDecimals(r.power_mean, 4) + "," +
       FixedDecimals(r.energy_kwh, 1);
  for (double v : {i.high.p50_latency, i.high.p99_latency, i.high.throughput, i.low.p50_latency, i.low.p99_latency,
                   i.low.throughput}) {
    s += "," + FixedDecimals(v, 5);
  }
  return s + "," + (meets ? "true" : "false") + "\n";
}

void AddThresholds(plot::Chart& chart, const PolicySpec& p, plot::Orientation o) {
  chart.AddReferenceLine({o, 100 * p.t1, "T1 " + FixedDecimals(100 * p.t1, 0) + " %", "#e6a100"});
  chart.AddReferenceLine({o, 100 * p.t2, "T2 " + FixedDecimals(100 * p.t2, 0) + " %", "#e05a00"});
  chart.AddReferenceLine({o, 100 * p.brake, "brake " + FixedDecimals(100 * p.brake, 0) + " %", "#c00000"});
}

Status PowerOverTime(const std::string& path, const RunContext& c, const RowRunResult& run,
                     const RowRunResult& reference) {
  const double period = c.config->control.telemetry_period_s;
  const bool days = run.duration_s > 2 * 86400;
  const double unit = days ? 86400 : 3600;
  plot::Chart chart("Row power: " + PolicyName(run.policy) + ", " + std::to_string(run.servers) + " servers (" +
                        std::to_string(c.config->row.baseline_servers) + " provisioned)",
                    plot::AxisSpec(days ? "time (days)" : "time (hours)", 0, run.duration_s / unit),
                    plot::AxisSpec("row power (% of budget)"));
  chart.set_size(1000, 460);
  auto series = [&](const RowRunResult& r) {
    std::vector<plot::Point> points;
    points.reserve(r.power_samples.size());
    for (size_t i = 0; i < r.power_samples.size(); ++i) {
      points.push_back({static_cast<double>(i + 1) * period / unit, 100.0 * r.power_samples[i]});
    }
    return points;
  };
  // Shade the time spent at each escalation level.
  auto shade = [&](PolicyLevel from, const std::string& label, const std::string& color) {
    double start = -1;
    double merge = run.duration_s / 800;  // merge gaps too small to see
    std::vector<std::pair<double, double>> spans;
    for (const PolicyAction& a : run.actions) {
      bool in = a.level >= from;
      if (in && start < 0) start = a.t_s;
      if (!in && start >= 0) {
        if (!spans.empty() && start - spans.back().second < merge) spans.back().second = a.t_s;
        else spans.push_back({start, a.t_s});
        start = -1;
      }
    }
    if (start >= 0) spans.push_back({start, run.duration_s});
    bool first = true;
    for (auto [a, b] : spans) {
      chart.AddBand({plot::Orientation::kVertical, a / unit, std::max(b, a + merge) / unit, first ? label : "", color});
      first = false;
    }
  };
  if (run.policy != PolicyKind::kBrakeOnly && run.policy != PolicyKind::kNone) {
    shade(PolicyLevel::kT1, "", "#f2c94c");
    shade(PolicyLevel::kT2Low, "", "#eb5757");
  }
  if (!reference.power_samples.empty() && run.policy != PolicyKind::kNone) {
    plot::Series ref("unconstrained", series(reference), plot::SeriesKind::kLine, "#b0b0b0");
    ref.width = 1;
    chart.AddSeries(ref);
  }
  plot::Series main(PolicyName(run.policy), series(run), plot::SeriesKind::kLine, "#1f77b4");
  main.width = 1;
  chart.AddSeries(main);
  // Only the engagements (an action with brake set right after one without).
  std::vector<plot::Point> engagements;
  bool was = false;
  for (const PolicyAction& a : run.actions) {
    if (a.brake && !was) {
      size_t i = std::min(run.power_samples.size() - 1, static_cast<size_t>(a.t_s / period));
      engagements.push_back({a.t_s / unit, 100.0 * run.power_samples[i]});
    }
    was = a.brake;
  }
  if (!engagements.empty()) {
    chart.AddSeries({"brake (" + std::to_string(engagements.size()) + ")", engagements, plot::SeriesKind::kScatter,
                     "#c00000"});
  }
  if (run.policy != PolicyKind::kBrakeOnly && run.policy != PolicyKind::kNone) {
    chart.AddSeries({"above T1 (shaded)", {}, plot::SeriesKind::kScatter, "#f2c94c"});
    chart.AddSeries({"above T2 (shaded)", {}, plot::SeriesKind::kScatter, "#eb5757"});
  }
  AddThresholds(chart, c.config->policy, plot::Orientation::kHorizontal);
  return chart.WriteSvg(path);
}

std::vector<plot::Point> Cdf(const std::vector<float>& samples) {
  std::vector<float> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  std::vector<plot::Point> points;
  const size_t n = sorted.size();
  const size_t steps = std::min<size_t>(n, 1000);
  for (size_t s = 0; s <= steps && n > 0; ++s) {
    size_t i = std::min(n - 1, s * (n - 1) / std::max<size_t>(1, steps));
    points.push_back({100.0 * sorted[i], static_cast<double>(i + 1) / static_cast<double>(n)});
  }
  return points;
}

Status PowerCdf(const std::string& path, const RunContext& c, const RowRunResult& run,
                const RowRunResult& reference) {
  plot::Chart chart("CDF of row power (" + std::to_string(run.servers) + " servers, " +
                        FixedDecimals(run.duration_s / 86400, 1) + " days of " + FixedDecimals(c.config->control.telemetry_period_s, 0) +
                        " s readings)",
                    plot::AxisSpec("row power (% of budget)"), plot::AxisSpec("fraction of time at or below", 0, 1));
  chart.set_size(900, 460);
  if (!reference.power_samples.empty() && run.policy != PolicyKind::kNone) {
    chart.AddSeries({"unconstrained", Cdf(reference.power_samples), plot::SeriesKind::kLine, "#b0b0b0"});
  }
  chart.AddSeries({PolicyName(run.policy), Cdf(run.power_samples), plot::SeriesKind::kLine, "#1f77b4"});
  AddThresholds(chart, c.config->policy, plot::Orientation::kVertical);
  return chart.WriteSvg(path);
}

// The names of the sweep's policies, in the order of their first point.
std::vector<std::string> PolicyOrder(const SweepResult& sweep) {
  std::vector<std::string> order;
  for (const SweepPoint& p : sweep.points) {
    std::string name = PolicyName(p.run.policy);
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  return order;
}

Status SweepCharts(const std::string& dir, const RunContext& c, const SweepResult& sweep) {
  const std::vector<std::string> policies = PolicyOrder(sweep);
  auto collect = [&](const std::string& policy, auto value) {
    std::vector<plot::Point> points;
    for (const SweepPoint& p : sweep.points) {
      if (PolicyName(p.run.policy) == policy) points.push_back({100 * p.added_fraction, value(p)});
    }
    return points;
  };
  const std::string subtitle = std::to_string(c.config->row.baseline_servers) + "-server row budget";
  plot::Chart brakes("Power-brake events vs added servers (" + subtitle + ")", plot::AxisSpec("servers added (%)"),
                     plot::AxisSpec("brake events"));
  for (size_t i = 0; i < policies.size(); ++i) {
    plot::Series s(policies[i], collect(policies[i], [](const SweepPoint& p) { return double(p.run.brake_events); }),
                   plot::SeriesKind::kLine, plot::PaletteColor(i));
    s.markers = true;
    brakes.AddSeries(s);
  }
  Status st = brakes.WriteSvg(dir + "/sweep_brakes.svg");
  if (!st.ok()) return st;

  for (bool high : {true, false}) {
    plot::Chart chart(std::string(high ? "High" : "Low") + "-priority latency impact vs added servers",
                      plot::AxisSpec("servers added (%)"), plot::AxisSpec("latency impact vs unconstrained (%)"));
    for (size_t i = 0; i < policies.size(); ++i) {
      auto pick = [&](bool p99) {
        return collect(policies[i], [&](const SweepPoint& p) {
          const PriorityImpact& im = high ? p.impact.high : p.impact.low;
          return 100 * (p99 ? im.p99_latency : im.p50_latency);
        });
      };
      plot::Series p50(policies[i] + " P50", pick(false), plot::SeriesKind::kLine, plot::PaletteColor(i));
      p50.markers = true;
      chart.AddSeries(p50);
      plot::Series p99(policies[i] + " P99", pick(true), plot::SeriesKind::kLine, plot::PaletteColor(i));
      p99.dash = "6 3";
      chart.AddSeries(p99);
    }
    double slo50 = high ? 1 : 5, slo99 = high ? 5 : 50;
    chart.AddReferenceLine({plot::Orientation::kHorizontal, slo50, "P50 SLO " + FixedDecimals(slo50, 0) + " %", "#2ca02c"});
    chart.AddReferenceLine({plot::Orientation::kHorizontal, slo99, "P99 SLO " + FixedDecimals(slo99, 0) + " %", "#2ca02c"});
    st = chart.WriteSvg(dir + (high ? "/sweep_latency_high.svg" : "/sweep_latency_low.svg"));
    if (!st.ok()) return st;
  }
  return Status::Ok();
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
      csv += FixedDecimals(static_cast<double>(std::min(run.power_samples.size(), i + per_minute)) * period, 0) + "," +
             FixedDecimals(mean, 4) + "," + FixedDecimals(mx, 4) + "," + FixedDecimals(rmean, 4) + "," + FixedDecimals(rmx, 4) + "\n";
    }
    st = WriteText(dir + "/row_power.csv", csv);
  }
  if (st.ok()) st = PowerOverTime(dir + "/row_power.svg", context, run, reference);
  if (st.ok()) st = PowerCdf(dir + "/power_cdf.svg", context, run, reference);
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
  const std::vector<std::string> order = PolicyOrder(sweep);
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
  if (st.ok()) st = SweepCharts(dir, context, sweep);
  return st;
}

}  // namespace wattcut::polca
