#include "wattcut/deadline/schedule_following.h"
#include "wattcut/base/energy_units.h"

#include <algorithm>
#include <limits>

namespace wattcut::deadline {
namespace {

// Calls f(share, from_s, to_s) for every share in time order; stops when f returns false.
template <typename F>
void ForEachShare(const Schedule& schedule, const F& f) {
  for (const ScheduledInterval& k : schedule.intervals) {
    double t = k.start_s;
    for (const PlanShare& p : k.shares) {
      if (!f(p, t, t + p.seconds)) return;
      t += p.seconds;
    }
  }
}

}  // namespace

std::optional<size_t> PointAt(const Schedule& schedule, double t_s) {
  std::optional<size_t> point;
  ForEachShare(schedule, [&](const PlanShare& p, double from, double) {
    if (point && from > t_s) return false;
    point = p.point;
    return true;
  });
  return point;
}

double IterationsDoneBy(const Schedule& schedule, double t_s) {
  double done = 0;
  ForEachShare(schedule, [&](const PlanShare& p, double from, double to) {
    if (t_s <= from) return false;
    done += t_s >= to ? p.iterations : p.iterations * (t_s - from) / (to - from);
    return true;
  });
  return done;
}

ScheduleTotals TotalsBy(const Schedule& schedule, double t_s) {
  ScheduleTotals t;
  t.finish_s = schedule.totals.finish_s;
  for (const ScheduledInterval& k : schedule.intervals) {
    double from = k.start_s;
    for (const PlanShare& p : k.shares) {
      const double seconds = std::clamp(t_s - from, 0.0, p.seconds);
      from += p.seconds;
      t.iterations += seconds / p.seconds * p.iterations;
      const double kwh = seconds * p.power_w / kJoulesPerKwh;
      t.energy_j += seconds * p.power_w;
      t.cost += kwh * k.price;
      t.carbon_g += kwh * k.carbon;
    }
  }
  return t;
}

double NextSwitchAfter(const Schedule& schedule, double t_s) {
  double next = std::numeric_limits<double>::infinity();
  ForEachShare(schedule, [&](const PlanShare&, double from, double) {
    if (from > t_s) {
      next = from;
      return false;
    }
    return true;
  });
  return next;
}

}  // namespace wattcut::deadline
