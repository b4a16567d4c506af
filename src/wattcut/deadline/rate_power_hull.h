// The frontier as a deadline schedule sees it: power against iteration rate. Within an interval
// a job may run one plan for part of it and another for the rest, so what it can draw at a rate
// is the lower convex hull of the plans' (rate, power) points; a plan above the hull is never
// the cheapest way to make that progress. The hull runs from the slowest plan to the fastest
// (the job never pauses), and its edges' slopes (W per iteration/s) increase.
#pragma once

#include <cstddef>
#include <vector>

namespace wattcut::deadline {

struct PlanRate {
  size_t point = 0;        // the frontier point
  double rate = 0;         // iterations per second: 1 / iteration time
  double power_w = 0;      // the job's average power running it
  double cap_power_w = 0;  // what a power budget is compared with (peak 1-s or average)
};

class RatePowerHull {
 public:
  // The hull of the plans in `plans` whose cap power is <= `budget_w` (infinity: all); empty
  // when none is.
  RatePowerHull(const std::vector<PlanRate>& plans, double budget_w);

  bool empty() const { return vertices_.empty(); }
  // In increasing rate; the first is the slowest allowed plan, the last the fastest.
  const std::vector<PlanRate>& vertices() const { return vertices_; }
  // Edge e joins vertices e and e + 1: W per (iteration/s).
  double slope(size_t e) const;

 private:
  std::vector<PlanRate> vertices_;
};

}  // namespace wattcut::deadline
