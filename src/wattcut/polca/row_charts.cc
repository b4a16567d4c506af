#include "wattcut/polca/row_charts.h"

#include <algorithm>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/plot/chart.h"
#include "wattcut/plot/color.h"

namespace wattcut::polca {
namespace {

void AddThresholds(plot::Chart& chart, const PolicySpec& p, plot::Orientation o) {
  chart.AddReferenceLine({o, 100 * p.t1, "T1 " + FixedDecimals(100 * p.t1, 0) + " %", "#e6a100"});
  chart.AddReferenceLine({o, 100 * p.t2, "T2 " + FixedDecimals(100 * p.t2, 0) + " %", "#e05a00"});
  chart.AddReferenceLine({o, 100 * p.brake, "brake " + FixedDecimals(100 * p.brake, 0) + " %", "#c00000"});
}

}  // namespace

std::string RowPowerChartSvg(const PolcaConfig& config, const RowRunResult& run, const RowRunResult& reference) {
  const double period = config.control.telemetry_period_s;
  const bool days = run.duration_s > 2 * 86400;
  const double unit = days ? 86400 : 3600;
  plot::Chart chart("Row power: " + PolicyName(run.policy) + ", " + std::to_string(run.servers) + " servers (" +
                        std::to_string(config.row.baseline_servers) + " provisioned)",
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
        if (!spans.empty() && start - spans.back().second < merge)
          spans.back().second = a.t_s;
        else
          spans.push_back({start, a.t_s});
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
    chart.AddSeries(
        {"brake (" + std::to_string(engagements.size()) + ")", engagements, plot::SeriesKind::kScatter, "#c00000"});
  }
  if (run.policy != PolicyKind::kBrakeOnly && run.policy != PolicyKind::kNone) {
    chart.AddSeries({"above T1 (shaded)", {}, plot::SeriesKind::kScatter, "#f2c94c"});
    chart.AddSeries({"above T2 (shaded)", {}, plot::SeriesKind::kScatter, "#eb5757"});
  }
  AddThresholds(chart, config.policy, plot::Orientation::kHorizontal);
  return chart.ToSvg();
}

namespace {

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

}  // namespace

std::string PowerCdfChartSvg(const PolcaConfig& config, const RowRunResult& run, const RowRunResult& reference) {
  plot::Chart chart("CDF of row power (" + std::to_string(run.servers) + " servers, " +
                        FixedDecimals(run.duration_s / 86400, 1) + " days of " +
                        FixedDecimals(config.control.telemetry_period_s, 0) + " s readings)",
                    plot::AxisSpec("row power (% of budget)"), plot::AxisSpec("fraction of time at or below", 0, 1));
  chart.set_size(900, 460);
  if (!reference.power_samples.empty() && run.policy != PolicyKind::kNone) {
    chart.AddSeries({"unconstrained", Cdf(reference.power_samples), plot::SeriesKind::kLine, "#b0b0b0"});
  }
  chart.AddSeries({PolicyName(run.policy), Cdf(run.power_samples), plot::SeriesKind::kLine, "#1f77b4"});
  AddThresholds(chart, config.policy, plot::Orientation::kVertical);
  return chart.ToSvg();
}

std::vector<std::string> SweepPolicyNames(const SweepResult& sweep) {
  std::vector<std::string> order;
  for (const SweepPoint& p : sweep.points) {
    std::string name = RunLabel(p.run);
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  return order;
}

namespace {

// The points of `policy`'s runs: servers added (%) against value(point).
template <typename Value>
std::vector<plot::Point> PolicyPoints(const SweepResult& sweep, const std::string& policy, Value value) {
  std::vector<plot::Point> points;
  for (const SweepPoint& p : sweep.points) {
    if (RunLabel(p.run) == policy) points.push_back({100 * p.added_fraction, value(p)});
  }
  return points;
}

// One line with markers per policy of the sweep, in SweepPolicyNames' order.
template <typename Value>
void AddPolicyLines(plot::Chart& chart, const SweepResult& sweep, Value value) {
  const std::vector<std::string> policies = SweepPolicyNames(sweep);
  for (size_t i = 0; i < policies.size(); ++i) {
    plot::Series s(policies[i], PolicyPoints(sweep, policies[i], value), plot::SeriesKind::kLine,
                   plot::PaletteColor(i));
    s.markers = true;
    chart.AddSeries(s);
  }
}

}  // namespace

std::string SweepBrakesChartSvg(const PolcaConfig& config, const SweepResult& sweep) {
  const std::string subtitle = std::to_string(config.row.baseline_servers) + "-server row budget";
  plot::Chart brakes("Power-brake events vs added servers (" + subtitle + ")", plot::AxisSpec("servers added (%)"),
                     plot::AxisSpec("brake events"));
  AddPolicyLines(brakes, sweep, [](const SweepPoint& p) { return double(p.run.brake_events); });
  return brakes.ToSvg();
}

std::string SweepLatencyChartSvg(const SweepResult& sweep, PriorityClass priority) {
  const bool high = priority == PriorityClass::kHigh;
  const std::vector<std::string> policies = SweepPolicyNames(sweep);
  plot::Chart chart(std::string(high ? "High" : "Low") + "-priority latency impact vs added servers",
                    plot::AxisSpec("servers added (%)"), plot::AxisSpec("latency impact vs unconstrained (%)"));
  for (size_t i = 0; i < policies.size(); ++i) {
    auto pick = [&](bool p99) {
      return PolicyPoints(sweep, policies[i], [&](const SweepPoint& p) {
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
  chart.AddReferenceLine(
      {plot::Orientation::kHorizontal, slo50, "P50 SLO " + FixedDecimals(slo50, 0) + " %", "#2ca02c"});
  chart.AddReferenceLine(
      {plot::Orientation::kHorizontal, slo99, "P99 SLO " + FixedDecimals(slo99, 0) + " %", "#2ca02c"});
  return chart.ToSvg();
}

std::string SweepTrainingChartSvg(const PolcaConfig& config, const SweepResult& sweep) {
  plot::Chart chart("Training throughput vs added servers (" + FixedDecimals(100 * config.row.training_share, 0) +
                        " % of servers training)",
                    plot::AxisSpec("servers added (%)"), plot::AxisSpec("training iterations vs unmanaged (%)"));
  AddPolicyLines(chart, sweep, [](const SweepPoint& p) { return 100 * p.impact.training_throughput; });
  return chart.ToSvg();
}

std::string SweepEnergyChartSvg(const SweepResult& sweep) {
  plot::Chart chart("Energy per served token vs added servers", plot::AxisSpec("servers added (%)"),
                    plot::AxisSpec("energy per token vs unconstrained (%)"));
  AddPolicyLines(chart, sweep, [](const SweepPoint& p) { return 100 * p.impact.energy_per_token; });
  return chart.ToSvg();
}

}  // namespace wattcut::polca
