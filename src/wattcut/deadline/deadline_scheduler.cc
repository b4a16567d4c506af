#include "wattcut/deadline/deadline_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/iso_time.h"

namespace wattcut::deadline {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kJoulesPerKwh = 3.6e6;
constexpr double kMaxHorizonS = 366.0 * 86400;  // a year
constexpr size_t kMaxIntervals = 1'000'000;
constexpr int kGoldenSteps = 60;
// Iterations are met to this share of the total plus a thousandth of one: the moves' sums round,
// and a time near 2026 in seconds since 1970 is exact only to about 2.4e-7 s.
constexpr double kIterationSlack = 1e-9;
constexpr double kIterationSlackAbsolute = 1e-3;

std::string When(double t_s) { return FormatTimestamp(t_s); }

std::string Hours(double s) { return FixedDecimals(s / 3600, 2) + " h"; }

}  // namespace

const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kCost:
      return "cost";
    case Objective::kCarbon:
      return "carbon";
    case Objective::kEnergy:
      return "energy";
  }
  return "cost";
}

DeadlineScheduler::DeadlineScheduler(ScheduleRequest request) : request_(std::move(request)) {}

Status DeadlineScheduler::Check() {
  const ScheduleRequest& r = request_;
  if (r.plans.empty()) return Error{"the frontier has no points"};
  for (const JobPlan& p : r.plans) {
    if (!(p.iteration_s > 0) || !std::isfinite(p.iteration_s) || !(p.power_w >= 0) || !std::isfinite(p.power_w) ||
        !(p.cap_power_w >= 0) || !std::isfinite(p.cap_power_w)) {
      return Error{"frontier point " + std::to_string(p.point) +
                   ": needs an iteration time > 0 and a finite power >= 0"};
    }
    rates_.push_back({p.point, 1 / p.iteration_s, p.power_w, p.cap_power_w});
  }
  if (!(r.iterations >= 1) || !std::isfinite(r.iterations)) {
    return Error{"--iterations: expected at least 1 iteration, got " + FixedDecimals(r.iterations, 0)};
  }
  if (!std::isfinite(r.start_s) || !std::isfinite(r.deadline_s) || !(r.deadline_s > r.start_s)) {
    return Error{"--deadline: " + When(r.deadline_s) + " is not after the start " + When(r.start_s)};
  }
  if (r.deadline_s - r.start_s > kMaxHorizonS) {
    return Error{"--deadline: the run from " + When(r.start_s) + " to " + When(r.deadline_s) +
                 " is longer than a year, the longest a schedule covers"};
  }
  if (r.objective == Objective::kCost && !r.price) return Error{"--objective cost needs a --price series"};
  if (r.objective == Objective::kCarbon && !r.carbon) return Error{"--objective carbon needs a --carbon series"};
  return Status::Ok();
}

Status DeadlineScheduler::Cut() {
  const ScheduleRequest& r = request_;
  std::vector<double> cuts{r.start_s, r.deadline_s};
  for (const std::optional<StepSeries>* series : {&r.price, &r.carbon, &r.budget}) {
    if (!*series) continue;
    const StepSeries& s = **series;
    if (s.At(r.start_s) == nullptr) {
      const Step& first = s.steps.front();
      return Error{s.source + ":" + std::to_string(first.line) + ": the series begins at " + When(first.time_s) +
                   ", after the start " + When(r.start_s) + ": it must give the " + s.value_name + " at the start"};
    }
    for (const Step& step : s.steps) {
      if (step.time_s > r.start_s && step.time_s < r.deadline_s) cuts.push_back(step.time_s);
    }
    if (cuts.size() > 3 * kMaxIntervals) break;
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (cuts.size() - 1 > kMaxIntervals) {
    return Error{"the series cut the run into " + std::to_string(cuts.size() - 1) + " intervals, more than " +
                 std::to_string(kMaxIntervals)};
  }
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i];
    Interval k{a, cuts[i + 1], kNaN, kNaN, kInf, 1, 0};
    if (r.price) k.price = r.price->At(a)->value;
    if (r.carbon) k.carbon = r.carbon->At(a)->value;
    if (r.budget) k.budget_w = r.budget->At(a)->value * (r.budget_gpus > 0 ? r.budget_gpus : 1);
    if (r.objective == Objective::kCost) k.weight = k.price;
    if (r.objective == Objective::kCarbon) k.weight = k.carbon;
    intervals_.push_back(k);
  }
  return Status::Ok();
}

Status DeadlineScheduler::BuildHulls() {
  std::map<double, size_t> by_budget;
  double least_cap = kInf;
  for (const PlanRate& p : rates_) least_cap = std::min(least_cap, p.cap_power_w);
  for (Interval& k : intervals_) {
    auto [it, added] = by_budget.emplace(k.budget_w, hulls_.size());
    if (added) {
      hulls_.emplace_back(rates_, k.budget_w);
      hull_budgets_.push_back(k.budget_w);
    }
    k.hull = it->second;
    if (hulls_[k.hull].empty()) {
      const StepSeries& b = *request_.budget;
      const Step* step = b.At(k.start_s);
      const int gpus = request_.budget_gpus;
      return Error{
          b.source + ":" + std::to_string(step->line) + ": column '" + b.value_name + "': the budget of " +
          FixedDecimals(step->value, 1) + " W" +
          (gpus > 0 ? " per GPU (" + FixedDecimals(k.budget_w, 0) + " W for " + std::to_string(gpus) + " GPUs)" : "") +
          " from " + When(k.start_s) + " to " + When(k.end_s) + " allows no plan: the least power of any is " +
          FixedDecimals(gpus > 0 ? least_cap / gpus : least_cap, 1) + " W" + (gpus > 0 ? " per GPU" : "")};
    }
  }
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const RatePowerHull& h = hulls_[intervals_[k].hull];
    for (size_t e = 0; e + 1 < h.vertices().size(); ++e) moves_.push_back({intervals_[k].weight * h.slope(e), k, e});
  }
  std::sort(moves_.begin(), moves_.end(), [](const Move& a, const Move& b) {
    if (a.marginal != b.marginal) return a.marginal < b.marginal;
    return a.interval != b.interval ? a.interval < b.interval : a.edge < b.edge;
  });
  return Status::Ok();
}

double DeadlineScheduler::Length(size_t k, double finish_s) const {
  return std::max(0.0, std::min(intervals_[k].end_s, finish_s) - intervals_[k].start_s);
}

double DeadlineScheduler::IterationsAt(double finish_s, bool fastest) const {
  double n = 0;
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const auto& v = hulls_[intervals_[k].hull].vertices();
    n += Length(k, finish_s) * (fastest ? v.back().rate : v.front().rate);
  }
  return n;
}

double DeadlineScheduler::FinishAt(bool fastest) const {
  double done = 0;
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const auto& v = hulls_[intervals_[k].hull].vertices();
    const double rate = fastest ? v.back().rate : v.front().rate;
    const double in_k = (intervals_[k].end_s - intervals_[k].start_s) * rate;
    if (done + in_k >= request_.iterations * (1 - kIterationSlack) - kIterationSlackAbsolute) {
      return std::min(intervals_[k].end_s, intervals_[k].start_s + (request_.iterations - done) / rate);
    }
    done += in_k;
  }
  return kInf;
}

DeadlineScheduler::Allocation DeadlineScheduler::AllocateBy(double finish_s) const {
  Allocation a;
  a.vertex.assign(intervals_.size(), 0);
  a.fraction.assign(intervals_.size(), 0.0);
  double need = request_.iterations;
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const double length = Length(k, finish_s);
    const PlanRate& slowest = hulls_[intervals_[k].hull].vertices().front();
    need -= length * slowest.rate;
    a.objective += intervals_[k].weight * length * slowest.power_w / kJoulesPerKwh;
  }
  const double slack = kIterationSlack * request_.iterations + kIterationSlackAbsolute;
  if (need < -slack) return a;  // the slowest plans finish before finish_s
  for (const Move& m : moves_) {
    if (need <= 0) break;
    const double length = Length(m.interval, finish_s);
    if (length <= 0) continue;
    const RatePowerHull& h = hulls_[intervals_[m.interval].hull];
    const PlanRate& from = h.vertices()[m.edge];
    const PlanRate& to = h.vertices()[m.edge + 1];
    const double gain = length * (to.rate - from.rate);
    const double share = gain >= need ? need / gain : 1.0;
    a.objective += share * intervals_[m.interval].weight * length * (to.power_w - from.power_w) / kJoulesPerKwh;
    if (share < 1.0) {
      a.fraction[m.interval] = share;
      need = 0;
    } else {
      a.vertex[m.interval] = m.edge + 1;
      need -= gain;
    }
  }
  a.feasible = need <= slack;
  return a;
}

std::vector<ScheduledInterval> DeadlineScheduler::Render(const Allocation& a, double finish_s) const {
  std::vector<ScheduledInterval> out;
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const Interval& in = intervals_[k];
    ScheduledInterval s{in.start_s, in.end_s, in.price, in.carbon, in.budget_w, {}, 0, 0, 0, 0};
    const double length = Length(k, finish_s);
    if (length > 0) {
      const auto& v = hulls_[in.hull].vertices();
      const size_t at = a.vertex[k];
      const double f = a.fraction[k];
      auto add = [&](const PlanRate& p, double seconds) {
        if (seconds <= 0) return;
        s.shares.push_back({p.point, seconds, seconds * p.rate, p.power_w});
      };
      add(v[at], (1 - f) * length);
      if (f > 0) add(v[at + 1], f * length);
    }
    for (const PlanShare& p : s.shares) {
      s.iterations += p.iterations;
      s.energy_j += p.seconds * p.power_w;
    }
    s.cost = s.energy_j / kJoulesPerKwh * s.price;
    s.carbon_g = s.energy_j / kJoulesPerKwh * s.carbon;
    out.push_back(std::move(s));
  }
  return out;
}

ScheduleTotals DeadlineScheduler::Sum(const std::vector<ScheduledInterval>& intervals, double finish_s) const {
  ScheduleTotals t;
  t.finish_s = finish_s;
  for (const ScheduledInterval& s : intervals) {
    t.iterations += s.iterations;
    t.energy_j += s.energy_j;
    t.cost += s.cost;
    t.carbon_g += s.carbon_g;
  }
  return t;
}

Status DeadlineScheduler::ChooseFinish() {
  const double n = request_.iterations;
  const double earliest = FinishAt(true);
  if (!std::isfinite(earliest)) {
    const double by_deadline = IterationsAt(request_.deadline_s, true);
    const double short_by = n - by_deadline;
    const double late_s = short_by / hulls_[intervals_.back().hull].vertices().back().rate;
    return Error{"the deadline " + When(request_.deadline_s) + " cannot be met: at the fastest plan" +
                 (request_.budget ? " each budget allows" : "") + " the job does " + FixedDecimals(by_deadline, 0) +
                 " of its " + FixedDecimals(n, 0) + " iterations by then, " + FixedDecimals(short_by, 0) +
                 " short; it would finish about " + Hours(late_s) + " late, at " + When(request_.deadline_s + late_s)};
  }
  const double slowest_finish = FinishAt(false);
  const double latest = std::min(request_.deadline_s, slowest_finish);
  if (slowest_finish < request_.deadline_s) {
    schedule_.notes.push_back("the deadline does not bind: the slowest plans finish at " + When(slowest_finish) + ", " +
                              Hours(request_.deadline_s - slowest_finish) + " before it");
  }
  std::vector<double> candidates{earliest, latest};
  if (schedule_.least_energy.available && schedule_.least_energy.totals.finish_s >= earliest &&
      schedule_.least_energy.totals.finish_s <= latest) {
    candidates.push_back(schedule_.least_energy.totals.finish_s);
  }
  auto objective = [&](double f) {
    const Allocation a = AllocateBy(f);
    return a.feasible ? a.objective : kInf;
  };
  for (const Interval& in : intervals_) {
    const double lo = std::max(in.start_s, earliest), hi = std::min(in.end_s, latest);
    if (!(hi > lo)) continue;
    double a = lo, b = hi;
    const double g = (std::sqrt(5.0) - 1) / 2;
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = objective(c), fd = objective(d);
    for (int i = 0; i < kGoldenSteps && b - a > 1e-6; ++i) {
      if (fc <= fd) {
        b = d, d = c, fd = fc;
        c = b - g * (b - a), fc = objective(c);
      } else {
        a = c, c = d, fc = fd;
        d = a + g * (b - a), fd = objective(d);
      }
    }
    candidates.push_back(lo);
    candidates.push_back(hi);
    candidates.push_back(fc <= fd ? c : d);
  }
  double best_f = latest, best = kInf;
  for (double f : candidates) {
    const double v = objective(f);
    // Ties go to the earlier finish.
    if (!std::isfinite(best) || v < best - 1e-12 * std::max(1.0, std::abs(best)) || (v <= best && f < best_f)) {
      best = v, best_f = f;
    }
  }
  const Allocation a = AllocateBy(best_f);
  if (!a.feasible) {
    return Error{"internal: no feasible finish time between the earliest, " + When(earliest) + ", and the latest, " +
                 When(latest)};
  }
  schedule_.intervals = Render(a, best_f);
  schedule_.totals = Sum(schedule_.intervals, best_f);
  return Status::Ok();
}

Baseline DeadlineScheduler::RunConstant(const std::string& name, const std::vector<PlanRate>& plan_of) const {
  Baseline b;
  b.name = name;
  double done = 0, finish = kInf;
  for (size_t k = 0; k < intervals_.size(); ++k) {
    const Interval& in = intervals_[k];
    ScheduledInterval s{in.start_s, in.end_s, in.price, in.carbon, in.budget_w, {}, 0, 0, 0, 0};
    if (done < request_.iterations) {
      const PlanRate& p = plan_of[k];
      const double seconds = std::min(in.end_s - in.start_s, (request_.iterations - done) / p.rate);
      s.shares.push_back({p.point, seconds, seconds * p.rate, p.power_w});
      s.iterations = seconds * p.rate;
      s.energy_j = seconds * p.power_w;
      done += s.iterations;
      if (done >= request_.iterations * (1 - kIterationSlack) - kIterationSlackAbsolute) {
        finish = in.start_s + seconds, done = request_.iterations;
      }
    }
    s.cost = s.energy_j / kJoulesPerKwh * s.price;
    s.carbon_g = s.energy_j / kJoulesPerKwh * s.carbon;
    b.intervals.push_back(std::move(s));
  }
  b.available = std::isfinite(finish);
  b.totals = Sum(b.intervals, finish);
  return b;
}

void DeadlineScheduler::Baselines() {
  std::vector<PlanRate> fastest;
  for (const Interval& in : intervals_) fastest.push_back(hulls_[in.hull].vertices().back());
  schedule_.fastest = RunConstant("fastest", fastest);
  if (!schedule_.fastest.available) schedule_.fastest.note = "the fastest plans do not finish by the deadline";
  // The least-energy single plan that finishes by the deadline within every budget its run meets.
  std::vector<PlanRate> by_energy = rates_;
  std::sort(by_energy.begin(), by_energy.end(), [](const PlanRate& a, const PlanRate& b) {
    const double ea = a.power_w / a.rate, eb = b.power_w / b.rate;
    return ea != eb ? ea < eb : a.point < b.point;
  });
  schedule_.least_energy.name = "least-energy";
  schedule_.least_energy.note = "no single plan finishes by the deadline within every budget";
  for (const PlanRate& p : by_energy) {
    const double finish = request_.start_s + request_.iterations / p.rate;
    if (finish > request_.deadline_s * (1 + 1e-15)) continue;
    bool allowed = true;
    for (const Interval& in : intervals_) {
      if (in.start_s < finish && p.cap_power_w > in.budget_w) allowed = false;
    }
    if (!allowed) continue;
    schedule_.least_energy = RunConstant("least-energy", std::vector<PlanRate>(intervals_.size(), p));
    break;
  }
}

Result<Schedule> DeadlineScheduler::Run() {
  schedule_.objective = request_.objective;
  if (Status s = Check(); !s.ok()) return s.error();
  if (Status s = Cut(); !s.ok()) return s.error();
  if (Status s = BuildHulls(); !s.ok()) return s.error();
  Baselines();
  if (Status s = ChooseFinish(); !s.ok()) return s.error();
  return schedule_;
}

double DeadlineScheduler::ObjectiveFinishingAt(double finish_s) const {
  if (intervals_.empty() || !(finish_s > request_.start_s) || finish_s > request_.deadline_s) return kNaN;
  const Allocation a = AllocateBy(finish_s);
  return a.feasible ? a.objective : kNaN;
}

Result<Schedule> ScheduleToDeadline(ScheduleRequest request) { return DeadlineScheduler(std::move(request)).Run(); }

}  // namespace wattcut::deadline
