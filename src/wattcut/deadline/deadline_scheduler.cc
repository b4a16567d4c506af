#include "wattcut/deadline/deadline_scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "wattcut/base/energy_units.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"

namespace wattcut::deadline {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxHorizonS = 366.0 * 86400;  // a year
constexpr size_t kMaxIntervals = 1'000'000;
// Interval ends whose cost is bounded below by no more than the best so far are costed by a
// bisection of the dual of this many steps (its bracket then spans 2^-60 of the lambdas between).
constexpr int kDualSteps = 60;
// Candidates within this share of the least are costed exactly before ties go to the earlier
// finish; at most kExactCandidates of them.
constexpr double kCandidateTie = 1e-9;
constexpr size_t kExactCandidates = 16;
// Iterations are met to this share of the total plus a thousandth of one: the moves' sums round,
// and a time near 2026 in seconds since 1970 is exact only to about 2.4e-7 s.
constexpr double kIterationSlack = 1e-9;
constexpr double kIterationSlackAbsolute = 1e-3;

std::string When(double t_s) { return FormatTimestamp(t_s); }

std::string Hours(double s) { return FixedDecimals(s / 3600, 2) + " h"; }

// Doubles in their order as unsigned integers (-inf < ... < -0 < +0 < ... < +inf), for a bisection
// that ends on a double the search asks about rather than near it.
uint64_t OrderKey(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

double FromOrderKey(uint64_t key) {
  const uint64_t bits = (key >> 63) != 0 ? key & ~(uint64_t{1} << 63) : ~key;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// Sums over ranks 0..n-1 that change one rank at a time (a Fenwick tree).
class PrefixSums {
 public:
  explicit PrefixSums(size_t n) : tree_(n + 1, 0.0) {}
  void Add(size_t rank, double value) {
    for (size_t i = rank + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += value;
  }
  // The sum over ranks below `rank`.
  double Below(size_t rank) const {
    double sum = 0;
    for (size_t i = rank; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::vector<double> tree_;
};

// The intervals of one hull seen so far by the sweep of phase 3: their lengths and lengths x
// weights by weight, to sum what they buy and draw at a multiplier lambda.
class HullPrefix {
 public:
  HullPrefix(const RatePowerHull& hull, std::vector<double> weights)
      : weights_(std::move(weights)), length_(weights_.size()), length_weight_(weights_.size()) {
    const auto& v = hull.vertices();
    rate0_ = v.front().rate;
    power0_ = v.front().power_w;
    least_energy_ = kInf;
    for (const PlanRate& p : v) least_energy_ = std::min(least_energy_, p.power_w / p.rate);
    for (size_t e = 0; e + 1 < v.size(); ++e) {
      slope_.push_back(hull.slope(e));
      rate_step_.push_back(v[e + 1].rate - v[e].rate);
      power_step_.push_back(v[e + 1].power_w - v[e].power_w);
    }
  }
  // Joules per iteration of the hull's most efficient vertex.
  double least_energy() const { return least_energy_; }
  bool empty() const { return total_length_ == 0; }
  void Add(double weight, double length_s) {
    const size_t rank =
        static_cast<size_t>(std::lower_bound(weights_.begin(), weights_.end(), weight) - weights_.begin());
    length_.Add(rank, length_s);
    length_weight_.Add(rank, length_s * weight);
    total_length_ += length_s;
    total_length_weight_ += length_s * weight;
  }
  // What the intervals so far buy (iterations) and draw (weight x J) at multiplier `lambda`, each
  // at the vertex its moves of marginal cost at most lambda reach.
  void AddAt(double lambda, double& iterations, double& weighted_j) const {
    iterations += rate0_ * total_length_;
    weighted_j += power0_ * total_length_weight_;
    for (size_t e = 0; e < slope_.size(); ++e) {
      const double s = slope_[e];
      double l = 0, lw = 0;
      if (s > 0) {  // weight <= lambda / s; the bounds fall as the slopes rise
        const size_t rank =
            static_cast<size_t>(std::upper_bound(weights_.begin(), weights_.end(), lambda / s) - weights_.begin());
        if (rank == 0) break;
        l = length_.Below(rank), lw = length_weight_.Below(rank);
      } else if (s == 0) {
        if (lambda >= 0) l = total_length_, lw = total_length_weight_;
      } else {  // weight >= lambda / s
        const size_t rank =
            static_cast<size_t>(std::lower_bound(weights_.begin(), weights_.end(), lambda / s) - weights_.begin());
        l = total_length_ - length_.Below(rank), lw = total_length_weight_ - length_weight_.Below(rank);
      }
      iterations += rate_step_[e] * l;
      weighted_j += power_step_[e] * lw;
    }
  }

 private:
  std::vector<double> weights_;  // sorted, distinct
  PrefixSums length_, length_weight_;
  double total_length_ = 0, total_length_weight_ = 0;
  double rate0_ = 0, power0_ = 0, least_energy_ = 0;
  std::vector<double> slope_, rate_step_, power_step_;
};

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
    return Error{"the iterations: expected at least 1, got " + FixedDecimals(r.iterations, 0)};
  }
  if (!std::isfinite(r.start_s) || !std::isfinite(r.deadline_s) || !(r.deadline_s > r.start_s)) {
    return Error{"the deadline " + When(r.deadline_s) + " is not after the start " + When(r.start_s)};
  }
  if (r.deadline_s - r.start_s > kMaxHorizonS) {
    return Error{"the deadline: the run from " + When(r.start_s) + " to " + When(r.deadline_s) +
                 " is longer than a year, the longest a schedule covers"};
  }
  // Worded for the command line and the server alike (a flag name in an API's answer misleads).
  if (r.objective == Objective::kCost && !r.price) return Error{"the cost objective needs a price series"};
  if (r.objective == Objective::kCarbon && !r.carbon) return Error{"the carbon objective needs a carbon series"};
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
    // A negative price is a reason to run fast, never to burn: it weighs as zero (free energy, so
    // every move faster is taken there), and the cost reported is the price's.
    if (r.objective == Objective::kCost) k.weight = std::max(0.0, k.price);
    if (r.objective == Objective::kCarbon) k.weight = k.carbon;
    intervals_.push_back(k);
  }
  // What the run costs (and emits) at its dearest, every interval at the most power of any plan,
  // must be a number: a price of 1e308 would make every cost infinite and every comparison
  // meaningless. Refused naming the row where it stops being one.
  double most_power_w = 0;
  for (const PlanRate& p : rates_) most_power_w = std::max(most_power_w, p.power_w);
  for (const std::optional<StepSeries>* series : {&r.price, &r.carbon}) {
    if (!*series) continue;
    const StepSeries& s = **series;
    const bool price = series == &r.price;
    double total = 0;
    for (const Interval& k : intervals_) {
      total += (price ? k.price : k.carbon) * most_power_w * (k.end_s - k.start_s) / kJoulesPerKwh;
      if (std::isfinite(total)) continue;
      const Step* step = s.At(k.start_s);
      return Error{s.source + ":" + std::to_string(step->line) + ": column '" + s.value_name +
                   "': " + GeneralText(step->value) + " makes the run's " + (price ? "cost" : "carbon") +
                   " overflow a double (at the most power of any plan, from " + When(k.start_s) + ")"};
    }
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

size_t DeadlineScheduler::EdgesBelow(size_t k, double lambda, bool or_equal) const {
  const RatePowerHull& h = hulls_[intervals_[k].hull];
  const double w = intervals_[k].weight;
  // Weights are >= 0 and slopes rise along the hull, so the marginal costs rise with the edge.
  size_t lo = 0, hi = h.vertices().size() - 1;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const double marginal = w * h.slope(mid);
    if (or_equal ? marginal <= lambda : marginal < lambda) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double DeadlineScheduler::GainAtMost(double finish_s, double lambda) const {
  double gain = 0;
  for (size_t k = 0; k < intervals_.size() && intervals_[k].start_s < finish_s; ++k) {
    const auto& v = hulls_[intervals_[k].hull].vertices();
    gain += Length(k, finish_s) * (v[EdgesBelow(k, lambda, true)].rate - v.front().rate);
  }
  return gain;
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
  if (need > 0) {
    if (GainAtMost(finish_s, kInf) < need - slack) return a;  // the fastest plans do not finish by then
    // lambda: the least marginal cost whose moves, with every cheaper one, buy what is needed. The
    // moves' gains change only at marginal costs, so the bisection ends on one of them.
    uint64_t lo = OrderKey(-kInf), hi = OrderKey(kInf);
    while (lo < hi) {
      if (Cancelled()) return a;
      const uint64_t mid = lo + (hi - lo) / 2;
      if (GainAtMost(finish_s, FromOrderKey(mid)) >= need) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    const double lambda = FromOrderKey(lo);
    // Every move cheaper than lambda, whole.
    for (size_t k = 0; k < intervals_.size(); ++k) {
      const double length = Length(k, finish_s);
      if (length <= 0) continue;
      const auto& v = hulls_[intervals_[k].hull].vertices();
      const size_t at = EdgesBelow(k, lambda, false);
      a.vertex[k] = at;
      need -= length * (v[at].rate - v.front().rate);
      a.objective += intervals_[k].weight * length * (v[at].power_w - v.front().power_w) / kJoulesPerKwh;
    }
    // The moves at lambda in the order of the cheapest-first greedy (interval, then edge), the last
    // one in part.
    for (size_t k = 0; k < intervals_.size() && need > 0; ++k) {
      const double length = Length(k, finish_s);
      if (length <= 0) continue;
      const RatePowerHull& h = hulls_[intervals_[k].hull];
      const auto& v = h.vertices();
      for (size_t e = a.vertex[k]; e + 1 < v.size() && need > 0; ++e) {
        if (intervals_[k].weight * h.slope(e) != lambda) break;
        const double gain = length * (v[e + 1].rate - v[e].rate);
        const double share = gain >= need ? need / gain : 1.0;
        a.objective += share * intervals_[k].weight * length * (v[e + 1].power_w - v[e].power_w) / kJoulesPerKwh;
        if (share < 1.0) {
          a.fraction[k] = share;
          need = 0;
        } else {
          a.vertex[k] = e + 1;
          need -= gain;
        }
      }
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
  auto exact = [&](double f) {
    const Allocation a = AllocateBy(f);
    return a.feasible ? a.objective : kInf;
  };
  std::vector<Candidate> candidates{{earliest, exact(earliest)}, {latest, exact(latest)}};
  if (schedule_.least_energy.available && schedule_.least_energy.totals.finish_s >= earliest &&
      schedule_.least_energy.totals.finish_s <= latest) {
    const double f = schedule_.least_energy.totals.finish_s;
    candidates.push_back({f, exact(f)});
  }
  double best_exact = kInf;
  for (const Candidate& c : candidates) best_exact = std::min(best_exact, c.value);
  for (const Candidate& c : SweepFinishes(earliest, latest, best_exact)) candidates.push_back(c);
  // The least by value, then the earlier finish; those within kCandidateTie of the least are costed
  // exactly (the sweep's values are the dual's, equal up to rounding) before ties go to the earlier.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    return x.value != y.value ? x.value < y.value : x.finish_s < y.finish_s;
  });
  const double least = candidates.front().value;
  double best_f = latest, best = kInf;
  for (size_t i = 0; i < candidates.size() && i < kExactCandidates; ++i) {
    const Candidate& c = candidates[i];
    if (i > 0 && !(c.value <= least + kCandidateTie * std::max(1.0, std::abs(least)))) break;
    const double f = c.finish_s;
    const double v = exact(f);
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

std::vector<DeadlineScheduler::Candidate> DeadlineScheduler::SweepFinishes(double earliest, double latest,
                                                                           double best_exact) const {
  const double n = request_.iterations;
  // One prefix per hull, over the weights of its intervals that start before the latest finish.
  std::vector<std::vector<double>> weights(hulls_.size());
  for (const Interval& in : intervals_) {
    if (in.start_s < latest) weights[in.hull].push_back(in.weight);
  }
  std::vector<HullPrefix> prefix;
  for (size_t h = 0; h < hulls_.size(); ++h) {
    std::sort(weights[h].begin(), weights[h].end());
    weights[h].erase(std::unique(weights[h].begin(), weights[h].end()), weights[h].end());
    prefix.emplace_back(hulls_[h], std::move(weights[h]));
  }
  std::vector<size_t> seen;  // the hulls with an interval in the prefix
  // The intervals before the one the sweep is at: what they buy at lambda, and the dual value
  // lambda N + sum of L_k h_k(lambda) (in the objective's units), a lower bound of the least
  // objective of any finish in the interval, and that objective where lambda is lambda(F).
  auto earlier = [&](double lambda, double& iterations) {
    double weighted_j = 0;
    iterations = 0;
    for (size_t h : seen) prefix[h].AddAt(lambda, iterations, weighted_j);
    return (lambda * n + weighted_j - lambda * iterations) / kJoulesPerKwh;
  };
  std::vector<Candidate> found;
  double best = best_exact;
  // The interval before, when the sweep's last one: whether its cost falls to its end, its dual
  // value and lambda*.
  bool before_falls = false;
  double before_dual = 0, before_lambda = 0;
  for (size_t j = 0; j < intervals_.size(); ++j) {
    if (j % 256 == 0 && Cancelled()) return found;
    const Interval& in = intervals_[j];
    const double lo = std::max(in.start_s, earliest), hi = std::min(in.end_s, latest);
    bool falls = false;
    if (hi > lo) {
      const RatePowerHull& hull = hulls_[in.hull];
      const double lambda = in.weight * prefix[in.hull].least_energy();
      double bought = 0;
      const double dual = earlier(lambda, bought);
      // F*_j: the earliest finish whose lambda(F) is lambda*_j, where the cost stops falling.
      const double finish = in.start_s + (n - bought) / hull.vertices()[EdgesBelow(j, lambda, true)].rate;
      falls = finish >= hi;
      const bool rises = finish <= lo;
      if (!falls && !rises) {
        found.push_back({finish, dual});
        best = std::min(best, dual);
      }
      // An interval end between a cost that falls to it and one that rises from it: its cost is the
      // dual maximised over lambda, which lies between the two intervals' lambda*.
      if (rises && before_falls && lo == in.start_s) {
        const double bound = std::max(dual, before_dual);
        if (bound <= best + kCandidateTie * std::max(1.0, std::abs(best))) {
          double a = std::min(before_lambda, lambda), b = std::max(before_lambda, lambda);
          double ignored = 0;
          for (int step = 0; step < kDualSteps; ++step) {
            const double mid = a + (b - a) / 2;
            double at_mid = 0;
            earlier(mid, at_mid);
            (at_mid < n ? a : b) = mid;
          }
          const double value = std::max({bound, earlier(a, ignored), earlier(b, ignored)});
          found.push_back({in.start_s, value});
          best = std::min(best, value);
        }
      }
      before_dual = dual, before_lambda = lambda;
    }
    before_falls = falls && hi == in.end_s;
    if (in.start_s < latest) {
      if (prefix[in.hull].empty()) seen.push_back(in.hull);
      prefix[in.hull].Add(in.weight, in.end_s - in.start_s);
    }
  }
  return found;
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

bool DeadlineScheduler::Cancelled() const {
  if (!cancelled_ && request_.cancelled) cancelled_ = request_.cancelled();
  return cancelled_;
}

Result<Schedule> DeadlineScheduler::Run() {
  schedule_.objective = request_.objective;
  const Error cancelled = Error::Aborted("the schedule's computation was cancelled");
  if (Status s = Check(); !s.ok()) return s.error();
  if (Status s = Cut(); !s.ok()) return s.error();
  if (Cancelled()) return cancelled;
  if (Status s = BuildHulls(); !s.ok()) return s.error();
  if (Cancelled()) return cancelled;
  Baselines();
  Status chosen = ChooseFinish();
  if (Cancelled()) return cancelled;
  if (!chosen.ok()) return chosen.error();
  return schedule_;
}

double DeadlineScheduler::ObjectiveFinishingAt(double finish_s) const {
  if (intervals_.empty() || !(finish_s > request_.start_s) || finish_s > request_.deadline_s) return kNaN;
  const Allocation a = AllocateBy(finish_s);
  return a.feasible ? a.objective : kNaN;
}

Result<Schedule> ScheduleToDeadline(ScheduleRequest request) { return DeadlineScheduler(std::move(request)).Run(); }

}  // namespace wattcut::deadline
