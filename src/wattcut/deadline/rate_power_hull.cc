#include "wattcut/deadline/rate_power_hull.h"

#include <algorithm>

namespace wattcut::deadline {

RatePowerHull::RatePowerHull(const std::vector<PlanRate>& plans, double budget_w) {
  std::vector<PlanRate> allowed;
  for (const PlanRate& p : plans) {
    if (p.cap_power_w <= budget_w) allowed.push_back(p);
  }
  // By rate, and at one rate the least power first (the others are never on the hull).
  std::sort(allowed.begin(), allowed.end(), [](const PlanRate& a, const PlanRate& b) {
    return a.rate != b.rate ? a.rate < b.rate : (a.power_w != b.power_w ? a.power_w < b.power_w : a.point < b.point);
  });
  // Monotone chain, lower side: drop the last vertex while it is on or above the line from the one
  // before it to the new point.
  for (const PlanRate& p : allowed) {
    if (!vertices_.empty() && vertices_.back().rate == p.rate) continue;
    while (vertices_.size() >= 2) {
      const PlanRate& a = vertices_[vertices_.size() - 2];
      const PlanRate& b = vertices_.back();
      const double cross = (b.rate - a.rate) * (p.power_w - a.power_w) - (b.power_w - a.power_w) * (p.rate - a.rate);
      if (cross > 0) break;  // b is below the line a-p: it stays
      vertices_.pop_back();
    }
    vertices_.push_back(p);
  }
}

double RatePowerHull::slope(size_t e) const {
  const PlanRate& a = vertices_.at(e);
  const PlanRate& b = vertices_.at(e + 1);
  return (b.power_w - a.power_w) / (b.rate - a.rate);
}

}  // namespace wattcut::deadline
