#include "wattcut/deadline/schedule_charts.h"

#include <algorithm>
#include <cmath>

#include "wattcut/base/fixed_decimals.h"

namespace wattcut::deadline {
namespace {

double Hours(double t_s, const ScheduleRequest& r) { return (t_s - r.start_s) / 3600; }

// The job's power as a step series: each plan share in turn, then 0 once done.
std::vector<plot::Point> PowerSteps(const std::vector<ScheduledInterval>& intervals, const ScheduleRequest& r) {
  std::vector<plot::Point> out;
  for (const ScheduledInterval& k : intervals) {
    double t = k.start_s;
    for (const PlanShare& p : k.shares) {
      out.push_back({Hours(t, r), p.power_w / 1000});
      t += p.seconds;
    }
    if (t < k.end_s) out.push_back({Hours(t, r), 0});
  }
  if (!intervals.empty()) out.push_back({Hours(intervals.back().end_s, r), out.empty() ? 0 : out.back().y});
  return out;
}

std::vector<plot::Point> Progress(const std::vector<ScheduledInterval>& intervals, const ScheduleRequest& r) {
  std::vector<plot::Point> out{{0, 0}};
  double done = 0;
  for (const ScheduledInterval& k : intervals) {
    double t = k.start_s;
    for (const PlanShare& p : k.shares) {
      t += p.seconds;
      done += p.iterations;
      out.push_back({Hours(t, r), 100 * std::min(1.0, done / r.iterations)});
    }
  }
  return out;
}

// The schedule (solid) and both baselines (dashed), each drawn by `points`.
template <typename Points>
void AddRuns(plot::Chart& chart, const Schedule& schedule, plot::SeriesKind kind, const Points& points) {
  plot::Series s("schedule (" + std::string(ObjectiveName(schedule.objective)) + ")", points(schedule.intervals), kind,
                 "#1f5fbf");
  s.width = 2;
  chart.AddSeries(s);
  for (const Baseline* b : {&schedule.fastest, &schedule.least_energy}) {
    if (!b->available) continue;
    plot::Series line(b->name + ", all along", points(b->intervals), kind,
                      b == &schedule.fastest ? "#c03030" : "#308030");
    line.dash = "6 3";
    line.width = 1.2;
    chart.AddSeries(line);
  }
}

const char* SignalName(const Schedule& s) { return s.objective == Objective::kCarbon ? "carbon intensity" : "price"; }

}  // namespace

plot::Chart SchedulePowerChart(const Schedule& schedule, const ScheduleRequest& request) {
  plot::Chart chart(
      std::string("Job power against the deadline; shading: ") + SignalName(schedule) + ", darker where dearer",
      plot::AxisSpec("hours from the start"), plot::AxisSpec("job power (kW)", 0, std::nullopt));
  double lo = INFINITY, hi = -INFINITY;
  auto signal = [&](const ScheduledInterval& k) {
    return schedule.objective == Objective::kCarbon ? k.carbon : k.price;
  };
  for (const ScheduledInterval& k : schedule.intervals) {
    const double v = signal(k);
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (std::isfinite(lo) && hi > lo) {
    for (const ScheduledInterval& k : schedule.intervals) {
      plot::Band band(plot::Orientation::kVertical, Hours(k.start_s, request), Hours(k.end_s, request), "", "#d08000");
      band.opacity = 0.04 + 0.36 * (signal(k) - lo) / (hi - lo);
      chart.AddBand(band);
    }
  }
  AddRuns(chart, schedule, plot::SeriesKind::kStep,
          [&](const std::vector<ScheduledInterval>& runs) { return PowerSteps(runs, request); });
  chart.AddReferenceLine({plot::Orientation::kVertical, Hours(request.deadline_s, request), "deadline"});
  return chart;
}

plot::Chart ScheduleProgressChart(const Schedule& schedule, const ScheduleRequest& request) {
  plot::Chart chart("Progress against the deadline (" + FixedDecimals(request.iterations, 0) + " iterations)",
                    plot::AxisSpec("hours from the start"), plot::AxisSpec("iterations done (%)", 0, 105));
  AddRuns(chart, schedule, plot::SeriesKind::kLine,
          [&](const std::vector<ScheduledInterval>& runs) { return Progress(runs, request); });
  chart.AddReferenceLine({plot::Orientation::kVertical, Hours(request.deadline_s, request), "deadline"});
  chart.AddReferenceLine({plot::Orientation::kHorizontal, 100, ""});
  return chart;
}

}  // namespace wattcut::deadline
