#include "wattcut/deadline/job_plans.h"

#include "wattcut/plan/plan_lookup.h"

namespace wattcut::deadline {

const char* BudgetPowerName(BudgetPower budget_power) {
  return budget_power == BudgetPower::kPeak ? "peak" : "average";
}

bool HasPeakPower(const std::vector<FrontierPoint>& points) {
  for (const FrontierPoint& p : points) {
    if (!p.peak_1s_power_w) return false;
  }
  return true;
}

BudgetPower BudgetPowerFor(const std::string& name, const std::vector<FrontierPoint>& points) {
  if (name.empty()) return HasPeakPower(points) ? BudgetPower::kPeak : BudgetPower::kAverage;
  return name == "peak" ? BudgetPower::kPeak : BudgetPower::kAverage;
}

Objective ObjectiveFor(const std::string& name, bool has_price, bool has_carbon) {
  if (name == "cost") return Objective::kCost;
  if (name == "carbon") return Objective::kCarbon;
  if (name == "energy") return Objective::kEnergy;
  return has_price ? Objective::kCost : has_carbon ? Objective::kCarbon : Objective::kEnergy;
}

Result<std::vector<JobPlan>> JobPlansFromFrontier(const std::vector<FrontierPoint>& points, int pipelines,
                                                  BudgetPower budget_power, const std::string& source) {
  if (budget_power == BudgetPower::kPeak && !HasPeakPower(points)) {
    return Error{source +
                 ": budgets compared with peak power: the frontier has no peak 1-s power (written without "
                 "it); compare with the average instead"};
  }
  std::vector<JobPlan> plans;
  for (size_t i = 0; i < points.size(); ++i) {
    const FrontierPoint& p = points[i];
    const double average = AveragePowerW(p) * pipelines;
    const double cap = budget_power == BudgetPower::kPeak ? *p.peak_1s_power_w * pipelines : average;
    plans.push_back({i, p.time_s, average, cap});
  }
  return plans;
}

}  // namespace wattcut::deadline
