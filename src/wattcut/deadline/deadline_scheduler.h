// Which frontier point a training run uses, interval by interval, to finish its iterations by a
// deadline at the least cost: money against an electricity price, grams against a grid's carbon
// intensity, or joules. `wattcut plan schedule` (cli/plan_schedule_command.cc) and docs/deadline.md.
//
// The model is piecewise constant: the price (or carbon, or 1 for energy) and the job's power
// budget change only at their series' times, and within each interval the job runs one or two
// plans of its hull (rate_power_hull.h) for shares of it. The job never pauses: from the start
// until its last iteration it runs at least its slowest allowed plan; once done, it draws nothing.
//
// The phases, in order:
//  1. Cut: the intervals between the start and the deadline at every time a series changes, each
//     with its price and budget. A series that begins after the start is refused.
//  2. Hulls: each interval's hull of the plans its budget allows; an interval that allows none is
//     refused, naming it, its budget and the least power of any plan.
//  3. Finish: for a finish time F, the least cost is a separable convex problem with one coupling
//     constraint (the iterations): every interval starts at its slowest plan, and moving an
//     interval one hull edge faster buys iterations at a marginal cost of price x edge slope per
//     iteration/s; taking the cheapest moves first, the last one in part, is optimal (the
//     exchange argument: any schedule that takes a dearer move while a cheaper one is left can
//     swap them and not cost more). The last move's marginal cost is the Lagrange multiplier on
//     progress, lambda; AllocateBy finds it exactly, as the least marginal cost whose moves and all
//     cheaper ones buy the iterations (a bisection over the doubles, each step one pass over the
//     intervals), so no list of every move is kept (a year of 5-minute prices on a 640-point
//     frontier has 44 million).
//     Within interval j the cost is convex in F, and its slope is h_j(lambda(F)), interval j's
//     least cost per second less lambda x its rate there (the envelope theorem); lambda(F) falls as
//     F grows. So the cost is least in interval j where lambda(F) reaches lambda*_j = price_j x the
//     hull's least energy per iteration: F*_j follows in closed form from the iterations that
//     every earlier interval buys at lambda*_j, and the cost there is the dual value
//     lambda*_j N + sum over earlier intervals of L_k h_k(lambda*_j). One sweep in time order gets
//     both for every interval from Fenwick trees of the earlier intervals' lengths by price, one
//     per hull: O(intervals x hull edges x log intervals). Where F*_j falls outside interval j,
//     the least cost lies on an interval end, which is a local minimum only between an interval
//     whose cost falls to its end and one whose cost rises from its start; its cost is the same
//     dual maximised over lambda between the two intervals' lambda*, by bisection, and only where
//     the dual values on either side (lower bounds) leave it a chance to be the least. The
//     earliest and latest finish and both baselines' finish times are candidates too, so the
//     schedule never costs more than either baseline; the best few candidates are costed exactly
//     by AllocateBy, and ties go to the earlier finish.
//  4. Baselines: the fastest allowed plan all along, and the least-energy single plan that still
//     finishes by the deadline (within every budget it meets), each run from the start until done.
//
// A negative price (a day-ahead market below zero) weighs as zero in the choice: energy is free
// there, so the job runs its fastest plan through it, and never runs slower or longer to draw
// more of it (the job's energy buys iterations, it is never burnt for the payment). The costs
// reported, the schedule's and the baselines', are at the real prices, negative ones included.
//
// An infeasible request is refused with the shortfall: the deadline cannot be met even at the
// fastest plans (how many iterations short, and how late they would finish), or a budget allows
// no plan in an interval.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/deadline/rate_power_hull.h"
#include "wattcut/deadline/step_series.h"

namespace wattcut::deadline {

enum class Objective { kCost, kCarbon, kEnergy };
const char* ObjectiveName(Objective objective);

// One frontier point, for the whole job (every data-parallel pipeline).
struct JobPlan {
  size_t point = 0;
  double iteration_s = 0;
  double power_w = 0;      // average, the job's
  double cap_power_w = 0;  // compared with a power budget: the peak 1-s power where known
};

struct ScheduleRequest {
  std::vector<JobPlan> plans;
  double start_s = 0;     // seconds since 1970 UTC
  double deadline_s = 0;  // the last iteration must be done by then
  double iterations = 0;
  Objective objective = Objective::kCost;
  std::optional<StepSeries> price;   // currency per kWh
  std::optional<StepSeries> carbon;  // gCO2 per kWh
  std::optional<StepSeries> budget;  // W, the job's, or per GPU when budget_gpus > 0
  int budget_gpus = 0;               // > 0: the budget's values are per GPU, for this many GPUs
  // Asked every few thousand steps of the work; true ends Run() with kAborted ("cancelled"): a
  // newer request for the same job, or a server stopping. Empty: never.
  std::function<bool()> cancelled;
};

// One plan for part of an interval.
struct PlanShare {
  size_t point = 0;
  double seconds = 0;
  double iterations = 0;
  double power_w = 0;
};

struct ScheduledInterval {
  double start_s = 0, end_s = 0;
  double price = 0;               // per kWh; NaN without a price series
  double carbon = 0;              // gCO2/kWh; NaN without a carbon series
  double budget_w = 0;            // infinity without a budget
  std::vector<PlanShare> shares;  // empty after the job is done
  double iterations = 0, energy_j = 0, cost = 0, carbon_g = 0;
};

struct ScheduleTotals {
  double finish_s = 0;
  double iterations = 0;
  double energy_j = 0;
  double cost = 0;      // NaN without a price series
  double carbon_g = 0;  // NaN without a carbon series
};

struct Baseline {
  std::string name;  // "fastest", "least-energy"
  bool available = false;
  std::string note;  // why not, when not
  std::vector<ScheduledInterval> intervals;
  ScheduleTotals totals;
};

struct Schedule {
  Objective objective = Objective::kCost;
  std::vector<ScheduledInterval> intervals;
  ScheduleTotals totals;
  Baseline fastest, least_energy;
  std::vector<std::string> notes;
};

class DeadlineScheduler {
 public:
  explicit DeadlineScheduler(ScheduleRequest request);
  Result<Schedule> Run();
  // After Run(): the least objective (per kWh units x kWh) of a schedule whose last iteration ends
  // exactly at `finish_s`; NaN when none does (the fastest plans cannot be done by then, or the
  // slowest are done before). The search of phase 3 minimises this over finish_s.
  double ObjectiveFinishingAt(double finish_s) const;

 private:
  struct Interval {
    double start_s, end_s, price, carbon, budget_w, weight;  // weight: the objective's per kWh
    size_t hull;                                             // index into hulls_
  };
  // Per interval, how far along its hull the job runs: vertex `vertex`, plus `fraction` of the next edge.
  struct Allocation {
    std::vector<size_t> vertex;
    std::vector<double> fraction;
    double objective = 0;
    bool feasible = false;
  };
  // A finish time the search of phase 3 compares, with its objective: exact, or the dual's (equal
  // up to rounding).
  struct Candidate {
    double finish_s = 0;
    double value = 0;
  };

  Status Check();
  Status Cut();
  Status BuildHulls();
  Status ChooseFinish();
  void Baselines();

  // The least-objective allocation finishing at `finish_s`.
  Allocation AllocateBy(double finish_s) const;
  // The edges of interval k's hull whose marginal cost is below `lambda` (or at most `lambda`).
  size_t EdgesBelow(size_t k, double lambda, bool or_equal) const;
  // The iterations that moves of marginal cost at most `lambda` buy beyond the slowest plans, for
  // a run finishing at `finish_s`.
  double GainAtMost(double finish_s, double lambda) const;
  // Phase 3's sweep: the interior minimum or the local-minimum interval end of every interval.
  std::vector<Candidate> SweepFinishes(double earliest, double latest, double best_exact) const;
  // Whether request_.cancelled says stop; once it has, it stays so.
  bool Cancelled() const;
  double Length(size_t k, double finish_s) const;
  double IterationsAt(double finish_s, bool fastest) const;
  // The time by which the slowest (fastest) plans have done the iterations; +inf when not by the deadline.
  double FinishAt(bool fastest) const;
  std::vector<ScheduledInterval> Render(const Allocation& a, double finish_s) const;
  ScheduleTotals Sum(const std::vector<ScheduledInterval>& intervals, double finish_s) const;
  // Runs one plan per interval (`plan_of[k]`) from the start until done.
  Baseline RunConstant(const std::string& name, const std::vector<PlanRate>& plan_of) const;

  ScheduleRequest request_;
  std::vector<PlanRate> rates_;
  std::vector<Interval> intervals_;
  std::vector<RatePowerHull> hulls_;
  std::vector<double> hull_budgets_;
  mutable bool cancelled_ = false;
  Schedule schedule_;
};

// DeadlineScheduler(request).Run().
Result<Schedule> ScheduleToDeadline(ScheduleRequest request);

}  // namespace wattcut::deadline
