#include "wattcut/emulate/emulation_charts.h"

#include <algorithm>
#include <map>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/dag/schedule_notation.h"
#include "wattcut/plan/pipeline_execution.h"
#include "wattcut/plot/chart.h"
#include "wattcut/plot/timeline.h"

namespace wattcut {

namespace {
const std::map<std::string, std::string>& MethodColors() {
  static const std::map<std::string, std::string> colors = {{"allmax", "#555555"},
                                                            {"perseus", "#d62728"},
                                                            {"perseus-intrinsic", "#ff9896"},
                                                            {"envpipe", "#1f77b4"},
                                                            {"zeus-global", "#2ca02c"}};
  return colors;
}
}  // namespace

std::string FrontierChartSvg(const Frontier& frontier, const EmulationResult& result, double time_scale,
                             double energy_scale, const std::string& title) {
  plot::Chart chart(title, plot::AxisSpec("iteration time (s)"),
                    plot::AxisSpec("energy per iteration, one pipeline (J)"));
  std::vector<plot::Point> line;
  for (const FrontierPoint& p : frontier.points()) line.push_back({p.time_s * time_scale, p.energy_j * energy_scale});
  chart.AddSeries(plot::Series("Perseus frontier", line, plot::SeriesKind::kLine, "#d62728"));
  plot::Series marks("", {}, plot::SeriesKind::kScatter, "#000000");
  marks.width = 4;
  auto mark = [&](double t, double e, const std::string& label) {
    marks.points.push_back({t, e});
    marks.point_labels.push_back(label);
  };
  mark(result.t_min_s, result.all_max_energy_j, "AllMax");
  mark(result.envpipe_time_s, result.envpipe_energy_j, "EnvPipe");
  mark(result.t_min_s, result.energy_t_min_j, "T_min");
  mark(result.t_star_s, result.energy_t_star_j, "T*");
  chart.AddSeries(marks);
  chart.AddReferenceLine(plot::ReferenceLine(plot::Orientation::kVertical, result.t_min_s,
                                             "T_min " + FixedDecimals(result.t_min_s, 3) + " s"));
  chart.AddReferenceLine(plot::ReferenceLine(plot::Orientation::kVertical, result.t_star_s,
                                             "T* " + FixedDecimals(result.t_star_s, 3) + " s"));
  return chart.ToSvg();
}

std::string SavingsChartSvg(const EmulationResult& result, const std::string& title) {
  plot::Chart chart(title, plot::AxisSpec("straggler slowdown T'/T"), plot::AxisSpec("energy saving vs AllMax (%)"));
  std::map<std::string, std::vector<plot::Point>> by_method;
  std::vector<std::string> order;
  for (const MethodResult& r : result.results) {
    if (r.method == "allmax") continue;
    if (!by_method.count(r.method)) order.push_back(r.method);
    by_method[r.method].push_back({r.slowdown, r.saving_percent});
  }
  for (const std::string& method : order) {
    plot::Series series(method, by_method[method], plot::SeriesKind::kLine, MethodColors().at(method));
    series.markers = by_method[method].size() < 30;
    chart.AddSeries(series);
  }
  chart.AddReferenceLine(plot::ReferenceLine(plot::Orientation::kVertical, result.t_star_s / result.t_min_s,
                                             "T*/T_min " + FixedDecimals(result.t_star_s / result.t_min_s, 3)));
  return chart.ToSvg();
}

std::string PlanTimelineSvg(const Frontier& frontier, size_t index, double time_scale, const std::string& title) {
  FrequencyPlan plan = frontier.PlanAt(index);
  std::vector<std::vector<double>> durations(plan.stages.size());
  int lo = 1 << 30, hi = 0;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    for (const PlannedComputation& c : plan.stages[s]) {
      durations[s].push_back(static_cast<double>(c.duration_units) * frontier.setup().unit_time_s);
      lo = std::min(lo, c.freq_mhz);
      hi = std::max(hi, c.freq_mhz);
    }
  }
  PipelineExecution execution = ExecutePipeline(frontier.setup().schedule, durations);
  plot::Timeline timeline(title, "time (ms)");
  timeline.SetColorScale("SM frequency (MHz)", lo, std::max(hi, lo + 1));
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    int lane = timeline.AddLane("stage " + std::to_string(s));
    for (size_t i = 0; i < plan.stages[s].size(); ++i) {
      const PlannedComputation& c = plan.stages[s][i];
      const ComputationTiming& t = execution.timing[s][i];
      const std::string label = ComputationNotation({c.kind, c.microbatch, c.chunk});
      // The tooltip shows the label, start, end and frequency.
      timeline.AddBox(
          plot::TimelineBox(lane, t.start_s * time_scale * 1000, t.end_s * time_scale * 1000, c.freq_mhz, label));
    }
  }
  return timeline.ToSvg();
}

std::string PowerSweepChartSvg(const PowerSweep& sweep, const std::string& title, double reference_slowdown,
                               double reference_reduction, const std::string& reference_label) {
  double perseus_slowest = 1;
  double slowest = 1;
  for (const PowerSweepPoint& p : sweep.perseus) perseus_slowest = std::max(perseus_slowest, p.slowdown);
  for (const PowerSweepPoint& p : sweep.uniform_lock) slowest = std::max(slowest, p.slowdown);
  slowest = std::max(slowest, perseus_slowest);
  const double x_max = std::min(slowest, std::max({1.3, perseus_slowest + 0.05, reference_slowdown + 0.05}));
  plot::Chart chart(title, plot::AxisSpec("slowdown T / T_AllMax", 1.0 - 0.01 * (x_max - 1), x_max),
                    plot::AxisSpec("power reduction vs AllMax (%): peak 1-s, average"));
  auto curve = [&](const std::vector<PowerSweepPoint>& points, PowerMetric metric) {
    std::vector<plot::Point> line;
    for (const PowerSweepPoint& p : points)
      line.push_back({p.slowdown, 100 * PowerReduction(p, sweep.all_max, metric)});
    std::stable_sort(line.begin(), line.end(), [](const plot::Point& a, const plot::Point& b) { return a.x < b.x; });
    return line;
  };
  const std::string uniform_color = "#1f77b4", perseus_color = "#d62728";
  plot::Series uniform_peak("uniform lock, peak", curve(sweep.uniform_lock, PowerMetric::kPeak),
                            plot::SeriesKind::kLine, uniform_color);
  uniform_peak.markers = true;
  plot::Series uniform_avg("uniform lock, average", curve(sweep.uniform_lock, PowerMetric::kAverage),
                           plot::SeriesKind::kLine, uniform_color);
  uniform_avg.dash = "6 3";
  plot::Series perseus_peak("Perseus, peak", curve(sweep.perseus, PowerMetric::kPeak), plot::SeriesKind::kLine,
                            perseus_color);
  plot::Series perseus_avg("Perseus, average", curve(sweep.perseus, PowerMetric::kAverage), plot::SeriesKind::kLine,
                           perseus_color);
  perseus_avg.dash = "6 3";
  for (plot::Series* s : {&uniform_peak, &uniform_avg, &perseus_peak, &perseus_avg}) chart.AddSeries(*s);
  if (!reference_label.empty()) {
    plot::Series mark("", {{reference_slowdown, 100 * reference_reduction}}, plot::SeriesKind::kScatter, "#000000");
    mark.width = 4;
    mark.point_labels = {reference_label};
    chart.AddSeries(mark);
  }
  return chart.ToSvg();
}

}  // namespace wattcut
