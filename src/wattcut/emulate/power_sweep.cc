#include "wattcut/emulate/power_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/dag/computation_dag.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/profile/backward_split.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {

namespace {

// A reduction this close below a target counts as reaching it (rounding of the powers).
constexpr double kReductionTolerance = 1e-12;

std::string Percent(double fraction) { return FixedDecimals(100 * fraction, 2) + " %"; }

// Per cost table of the planning problem: the (profile stage, instruction) it is of.
struct TableKey {
  int stage = 0;
  InstructionKind kind = InstructionKind::kForward;
};

// The clock plan every uniform-lock point and AllMax are: one measurement per cost table.
struct ClockPlan {
  std::vector<Measurement> per_table;
};

// The pipeline at these per-table measurements: durations quantised as the planner does,
// each computation drawing its measured energy over its quantised duration.
Result<ClockTimeline> MeasureClockPlan(const ClockPlan& plan, const PlanningProblem& planning, int devices,
                                       double window_s, const std::string& what) {
  const double unit = planning.setup.unit_time_s;
  const double p2p = planning.setup.p2p_power_w;
  TimeCostProblem problem;
  problem.precedences = planning.problem.precedences;
  problem.cost_table = planning.problem.cost_table;
  std::vector<int64_t> table_durations;
  for (const Measurement& m : plan.per_table) {
    const double q = PythonFloorDiv(m.time_s, unit);
    if (!(q >= 1) || q > static_cast<double>(kMaxDurationUnits)) {
      return Error{what + ": " + std::to_string(m.freq_mhz) + " MHz: time " + FixedDecimals(m.time_s, 6) +
                   " s is not between 1 and 2^53 unit times of " + FixedDecimals(unit, 6) + " s"};
    }
    const auto units = static_cast<int64_t>(q);
    table_durations.push_back(units);
    // Effective energy as the planner defines it: the blocking energy is drawn on top.
    problem.cost_tables.push_back(CostTable{units, units, {m.energy_j - p2p * static_cast<double>(units) * unit}});
  }
  std::vector<int64_t> durations;
  durations.reserve(problem.cost_table.size());
  for (int t : problem.cost_table) durations.push_back(table_durations[static_cast<size_t>(t)]);
  DurationFrontier shape(durations, devices);
  Result<FrontierPower> power = FrontierPower::Create(shape, problem, unit, devices * p2p);
  if (!power.ok()) return power.error();
  Result<PowerTimeline> timeline = power->Timeline(durations);
  if (!timeline.ok()) return timeline.error();
  Result<double> peak = power->PeakPower(durations, window_s);
  if (!peak.ok()) return peak.error();
  if (!(timeline->time_s.back() > 0)) return Error{what + ": the iteration takes no time"};
  ClockTimeline measured;
  measured.timeline = std::move(*timeline);
  measured.peak_power_w = *peak;
  return measured;
}

// A clock plan's point of the sweep: times scaled, powers x tensor parallelism.
PowerSweepPoint SweepPoint(const ClockTimeline& measured, const PowerSweepSetup& setup) {
  const PowerTimeline& timeline = measured.timeline;
  double energy_j = 0;
  for (size_t j = 0; j < timeline.power_w.size(); ++j) {
    energy_j += timeline.power_w[j] * (timeline.time_s[j + 1] - timeline.time_s[j]);
  }
  const double time_s = timeline.time_s.back();
  PowerSweepPoint point;
  point.iteration_time_s = time_s * setup.time_scale;
  point.avg_power_w = energy_j / time_s * setup.tensor_parallel;
  point.peak_power_w = measured.peak_power_w * setup.tensor_parallel;
  point.freq_mhz = measured.freq_mhz;
  return point;
}

}  // namespace

const char* PowerMetricName(PowerMetric metric) { return metric == PowerMetric::kPeak ? "peak" : "average"; }

double PowerReduction(const PowerSweepPoint& point, const PowerSweepPoint& all_max, PowerMetric metric) {
  return metric == PowerMetric::kPeak ? 1 - point.peak_power_w / all_max.peak_power_w
                                      : 1 - point.avg_power_w / all_max.avg_power_w;
}

std::optional<double> BestReductionWithin(const std::vector<PowerSweepPoint>& points, const PowerSweepPoint& all_max,
                                          PowerMetric metric, double slowdown) {
  std::optional<double> best;
  for (const PowerSweepPoint& p : points) {
    if (p.slowdown > slowdown + 1e-12) continue;
    const double r = PowerReduction(p, all_max, metric);
    if (!best || r > *best) best = r;
  }
  return best;
}

std::optional<double> InterpolatedReductionAt(const std::vector<PowerSweepPoint>& points,
                                              const PowerSweepPoint& all_max, PowerMetric metric, double slowdown) {
  std::vector<PowerSweepPoint> sorted = points;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const PowerSweepPoint& a, const PowerSweepPoint& b) { return a.slowdown < b.slowdown; });
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k].slowdown < slowdown) continue;
    const double r = PowerReduction(sorted[k], all_max, metric);
    if (sorted[k].slowdown == slowdown) return r;
    if (k == 0) return std::nullopt;
    const PowerSweepPoint& q = sorted[k - 1];
    const double rq = PowerReduction(q, all_max, metric);
    return rq + (r - rq) * (slowdown - q.slowdown) / (sorted[k].slowdown - q.slowdown);
  }
  return std::nullopt;
}

ReductionReach FindReduction(const std::vector<PowerSweepPoint>& points, const PowerSweepPoint& all_max,
                             PowerMetric metric, double target, const std::string& method) {
  ReductionReach reach;
  if (points.empty()) {
    reach.reason = method + " has no points";
    return reach;
  }
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return points[a].slowdown < points[b].slowdown; });
  for (size_t k = 0; k < order.size(); ++k) {
    const PowerSweepPoint& p = points[order[k]];
    const double r = PowerReduction(p, all_max, metric);
    if (r < target - kReductionTolerance) continue;
    reach.slowdown = p.slowdown;
    reach.reduction = r;
    if (p.freq_mhz > 0) reach.freq_mhz = p.freq_mhz;
    if (p.freq_mhz == 0) reach.plan_index = p.plan_index;
    reach.interpolated_slowdown = p.slowdown;
    if (k > 0) {
      // Every point before this one is below the target; the one just before is the
      // segment's other end.
      const PowerSweepPoint& q = points[order[k - 1]];
      const double rq = PowerReduction(q, all_max, metric);
      if (r > rq) reach.interpolated_slowdown = q.slowdown + (target - rq) / (r - rq) * (p.slowdown - q.slowdown);
    }
    return reach;
  }
  size_t best = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    if (PowerReduction(points[i], all_max, metric) > PowerReduction(points[best], all_max, metric)) best = i;
  }
  reach.reason = method + " reaches at most " + Percent(PowerReduction(points[best], all_max, metric)) + " " +
                 PowerMetricName(metric) + " power reduction (at slowdown " + FixedDecimals(points[best].slowdown, 4) +
                 (points[best].freq_mhz > 0 ? ", " + std::to_string(points[best].freq_mhz) + " MHz" : std::string()) +
                 ")";
  return reach;
}

std::vector<PowerSweepRow> PowerSweepTable(const PowerSweep& sweep, const std::vector<double>& targets) {
  std::vector<PowerSweepRow> rows;
  for (PowerMetric metric : {PowerMetric::kPeak, PowerMetric::kAverage}) {
    for (double target : targets) {
      PowerSweepRow row;
      row.metric = metric;
      row.target = target;
      row.uniform_lock = FindReduction(sweep.uniform_lock, sweep.all_max, metric, target, "uniform-lock");
      row.perseus = FindReduction(sweep.perseus, sweep.all_max, metric, target, "perseus");
      const ReductionReach& u = row.uniform_lock;
      const ReductionReach& p = row.perseus;
      if (u.slowdown) {
        // Perseus's best at no more slowdown than uniform locking's.
        const std::optional<double> best = BestReductionWithin(sweep.perseus, sweep.all_max, metric, *u.slowdown);
        row.perseus_reduction_at_uniform_slowdown = best;
        if (best && *u.reduction > 0) row.reduction_ratio = *best / *u.reduction;
      }
      if (!u.slowdown || !p.slowdown) {
        row.reason = !u.slowdown ? u.reason : p.reason;
      } else if (*u.slowdown - 1 <= 1e-12) {
        row.reason = "uniform-lock reaches it without slowing down: no ratio of slowdowns";
      } else {
        // A plan faster than AllMax counts as no slowdown.
        row.slowdown_ratio = std::max(0.0, *p.slowdown - 1) / (*u.slowdown - 1);
        if (*u.interpolated_slowdown - 1 > 1e-12) {
          row.interpolated_slowdown_ratio =
              std::max(0.0, *p.interpolated_slowdown - 1) / (*u.interpolated_slowdown - 1);
        }
      }
      row.goal_met =
          (row.slowdown_ratio && *row.slowdown_ratio <= 0.5) || (row.reduction_ratio && *row.reduction_ratio >= 2);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

Result<ClockTimelines> UniformLockTimelines(const Profile& measured, const PlanningProblem& planning, double window_s) {
  if (!(window_s > 0) || !std::isfinite(window_s)) return Error{"power sweep: window must be > 0 s"};
  const PipelineSchedule& schedule = planning.setup.schedule;
  const int devices = static_cast<int>(schedule.size());
  Result<ComputationDag> dag = BuildComputationDag(schedule);
  if (!dag.ok()) return dag.error();
  if (dag->nodes.size() != planning.problem.cost_table.size()) {
    return Error{"power sweep: the schedule has " + std::to_string(dag->nodes.size()) +
                 " computations, the planning problem " + std::to_string(planning.problem.cost_table.size())};
  }
  // The planner plans a split backward the profile did not measure as halves of the
  // backward; so do the clock plans.
  bool split = false;
  for (const auto& node : dag->nodes) split = split || node.computation.kind == InstructionKind::kBackwardInput;
  const Profile halves = split && NeedsBackwardSplit(measured) ? WithSplitBackward(measured) : Profile();
  const Profile& profile = halves.num_stages() > 0 ? halves : measured;

  std::vector<TableKey> keys(planning.problem.cost_tables.size());
  for (size_t v = 0; v < dag->nodes.size(); ++v) {
    keys[static_cast<size_t>(planning.problem.cost_table[v])] = {dag->nodes[v].profile_stage,
                                                                 dag->nodes[v].computation.kind};
  }
  auto where = [](const TableKey& key) {
    return "stage " + std::to_string(key.stage) + " " + std::string(InstructionName(key.kind));
  };

  ClockTimelines timelines;
  // AllMax: each (stage, instruction) at its highest measured clock.
  ClockPlan all_max;
  for (const TableKey& key : keys) {
    if (profile.measurements(key.stage, key.kind).empty()) return Error{"power sweep: " + where(key) + ": no rows"};
    all_max.per_table.push_back(profile.fastest_measurement(key.stage, key.kind));
  }
  Result<ClockTimeline> base = MeasureClockPlan(all_max, planning, devices, window_s, "AllMax");
  if (!base.ok()) return base.error();
  timelines.all_max = std::move(*base);
  timelines.all_max.freq_mhz = measured.max_freq_mhz();

  // Uniform locks: every clock, from the highest down.
  std::set<int, std::greater<>> clocks;
  for (const TableKey& key : keys) {
    for (const Measurement& m : profile.measurements(key.stage, key.kind)) clocks.insert(m.freq_mhz);
  }
  for (int clock : clocks) {
    ClockPlan plan;
    bool complete = true;
    for (const TableKey& key : keys) {
      const auto& rows = profile.measurements(key.stage, key.kind);
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Measurement& m) { return m.freq_mhz == clock; });
      if (it == rows.end()) {
        complete = false;
        break;
      }
      plan.per_table.push_back(*it);
    }
    if (!complete) {
      timelines.skipped_clocks_mhz.push_back(clock);
      continue;
    }
    Result<ClockTimeline> point =
        MeasureClockPlan(plan, planning, devices, window_s, "uniform-lock at " + std::to_string(clock) + " MHz");
    if (!point.ok()) return point.error();
    point->freq_mhz = clock;
    timelines.uniform_lock.push_back(std::move(*point));
  }
  return timelines;
}

Result<PowerSweep> SweepPower(const Profile& measured, const PlanningProblem& planning, const Frontier& frontier,
                              const PowerSweepSetup& setup) {
  if (!(setup.window_s > 0) || !std::isfinite(setup.window_s)) return Error{"power sweep: window must be > 0 s"};
  if (!(setup.time_scale > 0) || !std::isfinite(setup.time_scale)) {
    return Error{"power sweep: time scale must be > 0"};
  }
  if (setup.tensor_parallel < 1) return Error{"power sweep: tensor parallelism must be >= 1"};
  Result<ClockTimelines> clock_timelines = UniformLockTimelines(measured, planning, setup.window_s / setup.time_scale);
  if (!clock_timelines.ok()) return clock_timelines.error();

  PowerSweep sweep;
  sweep.all_max = SweepPoint(clock_timelines->all_max, setup);
  const double t_all_max = sweep.all_max.iteration_time_s;
  for (const ClockTimeline& lock : clock_timelines->uniform_lock) {
    PowerSweepPoint point = SweepPoint(lock, setup);
    point.slowdown = point.iteration_time_s / t_all_max;
    sweep.uniform_lock.push_back(point);
  }
  sweep.skipped_clocks_mhz = clock_timelines->skipped_clocks_mhz;

  // Perseus: every frontier plan, its peak from the same timeline.
  Frontier powered = frontier;
  Result<FrontierPower> power = FrontierPower::Create(powered, planning.problem);
  if (!power.ok()) return power.error();
  if (Status s = power->SetPeakPowers(powered, setup.window_s / setup.time_scale); !s.ok()) return s.error();
  for (size_t i = 0; i < powered.points().size(); ++i) {
    const FrontierPoint& fp = powered.points()[i];
    PowerSweepPoint point;
    point.plan_index = i;
    point.iteration_time_s = fp.time_s * setup.time_scale;
    point.slowdown = point.iteration_time_s / t_all_max;
    point.avg_power_w = fp.energy_j / fp.time_s * setup.tensor_parallel;
    point.peak_power_w = *fp.peak_1s_power_w * setup.tensor_parallel;
    sweep.perseus.push_back(point);
  }
  sweep.table = PowerSweepTable(sweep, setup.reduction_targets);
  PowerSweepReference& ref = sweep.reference;
  ref.uniform_lock_peak_reduction =
      BestReductionWithin(sweep.uniform_lock, sweep.all_max, PowerMetric::kPeak, ref.slowdown);
  ref.uniform_lock_interpolated_peak_reduction =
      InterpolatedReductionAt(sweep.uniform_lock, sweep.all_max, PowerMetric::kPeak, ref.slowdown);
  ref.perseus_peak_reduction = BestReductionWithin(sweep.perseus, sweep.all_max, PowerMetric::kPeak, ref.slowdown);
  return sweep;
}

namespace {

nlohmann::json OptionalNumber(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json PointJson(const PowerSweepPoint& p, bool perseus) {
  nlohmann::json j;
  if (perseus) {
    j["plan"] = p.plan_index;
  } else {
    j["freq_mhz"] = p.freq_mhz;
  }
  j["slowdown"] = p.slowdown;
  j["iteration_time_s"] = p.iteration_time_s;
  j["avg_power_w"] = p.avg_power_w;
  j["peak_power_w"] = p.peak_power_w;
  return j;
}

nlohmann::json ReachJson(const ReductionReach& r) {
  nlohmann::json j;
  j["slowdown"] = OptionalNumber(r.slowdown);
  j["interpolated_slowdown"] = OptionalNumber(r.interpolated_slowdown);
  j["reduction"] = OptionalNumber(r.reduction);
  if (r.freq_mhz) j["freq_mhz"] = *r.freq_mhz;
  if (r.plan_index) j["plan"] = *r.plan_index;
  if (!r.slowdown) j["reason"] = r.reason;
  return j;
}

std::string ReachText(const ReductionReach& r) {
  if (!r.slowdown) return "not reached";
  std::string where = r.freq_mhz ? std::to_string(*r.freq_mhz) + " MHz" : "plan " + std::to_string(*r.plan_index);
  return FixedDecimals(*r.slowdown, 4) + " (" + where + ")";
}

}  // namespace

nlohmann::json PowerSweepToJson(const PowerSweep& sweep, const nlohmann::json& config) {
  nlohmann::json j;
  j["format"] = kPowerSweepFormat;
  j["config"] = config;
  j["definitions"] = {
      {"slowdown", "T / T_AllMax, T the iteration time on the DAG's execution timeline"},
      {"avg_power_w", "the pipeline's energy per iteration / T, blocking power of idle GPUs included"},
      {"peak_power_w", "the largest average pipeline power over any peak_window_s window, iterations back to back"},
      {"power_reduction", "1 - P / P_AllMax, for the average and the peak power"},
      {"table.slowdown", "the least slowdown of a point whose reduction is >= the target"},
      {"table.interpolated_slowdown",
       "linear between that point and the point before it in slowdown order (below the target)"},
      {"table.slowdown_ratio", "(s_perseus - 1) / (s_uniform_lock - 1), a plan faster than AllMax counting as 1"},
      {"table.reduction_ratio",
       "perseus's largest reduction at a slowdown <= uniform-lock's slowdown / uniform-lock's reduction there"},
      {"table.goal_met", "slowdown_ratio <= 0.5 or reduction_ratio >= 2"}};
  j["all_max"] = {{"iteration_time_s", sweep.all_max.iteration_time_s},
                  {"avg_power_w", sweep.all_max.avg_power_w},
                  {"peak_power_w", sweep.all_max.peak_power_w}};
  nlohmann::json uniform = nlohmann::json::array(), perseus = nlohmann::json::array();
  for (const PowerSweepPoint& p : sweep.uniform_lock) uniform.push_back(PointJson(p, false));
  for (const PowerSweepPoint& p : sweep.perseus) perseus.push_back(PointJson(p, true));
  j["methods"] = nlohmann::json::array(
      {{{"method", "uniform-lock"}, {"points", uniform}}, {{"method", "perseus"}, {"points", perseus}}});
  j["skipped_clocks_mhz"] = sweep.skipped_clocks_mhz;
  const PowerSweepReference& ref = sweep.reference;
  j["reference"] = {
      {"source", "POLCA (../shared/docs/POLCA.md section 1): locking cut peak server power 22 % for 10 % slowdown"},
      {"slowdown", ref.slowdown},
      {"peak_reduction", ref.peak_reduction},
      {"uniform_lock_peak_reduction", OptionalNumber(ref.uniform_lock_peak_reduction)},
      {"uniform_lock_interpolated_peak_reduction", OptionalNumber(ref.uniform_lock_interpolated_peak_reduction)},
      {"perseus_peak_reduction", OptionalNumber(ref.perseus_peak_reduction)}};
  nlohmann::json table = nlohmann::json::array();
  for (const PowerSweepRow& row : sweep.table) {
    nlohmann::json r;
    r["metric"] = PowerMetricName(row.metric);
    r["target_reduction"] = row.target;
    r["uniform-lock"] = ReachJson(row.uniform_lock);
    r["perseus"] = ReachJson(row.perseus);
    r["slowdown_ratio"] = OptionalNumber(row.slowdown_ratio);
    r["interpolated_slowdown_ratio"] = OptionalNumber(row.interpolated_slowdown_ratio);
    r["perseus_reduction_at_uniform_slowdown"] = OptionalNumber(row.perseus_reduction_at_uniform_slowdown);
    r["reduction_ratio"] = OptionalNumber(row.reduction_ratio);
    r["goal_met"] = row.goal_met;
    if (!row.reason.empty()) r["reason"] = row.reason;
    table.push_back(r);
  }
  j["table"] = table;
  return j;
}

std::string PowerSweepTableText(const PowerSweep& sweep) {
  std::string text =
      "  reduction  metric   uniform-lock slowdown  perseus slowdown      ratio  perseus at uniform's  goal\n";
  for (const PowerSweepRow& row : sweep.table) {
    char line[256];
    const std::string ratio = row.slowdown_ratio ? FixedDecimals(*row.slowdown_ratio, 3) : "-";
    const std::string at = row.perseus_reduction_at_uniform_slowdown
                               ? Percent(*row.perseus_reduction_at_uniform_slowdown)
                               : std::string("-");
    std::snprintf(line, sizeof(line), "  %7.0f %%  %-7s  %-21s  %-20s  %5s  %20s  %s\n", 100 * row.target,
                  PowerMetricName(row.metric), ReachText(row.uniform_lock).c_str(), ReachText(row.perseus).c_str(),
                  ratio.c_str(), at.c_str(), row.goal_met ? "met" : "not met");
    text += line;
    if (!row.reason.empty()) text += "             (" + row.reason + ")\n";
  }
  return text;
}

}  // namespace wattcut
