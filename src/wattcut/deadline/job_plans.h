// A frontier's points as a deadline schedule's plans (deadline_scheduler.h): the job's power is
// the frontier's (one pipeline's) times its data-parallel pipelines, and a power budget is
// compared with each point's peak 1-s power or its average. `wattcut plan schedule` and the
// planning server's deadline schedules build their plans here.
#pragma once

#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/deadline/deadline_scheduler.h"
#include "wattcut/plan/duration_frontier.h"

namespace wattcut::deadline {

enum class BudgetPower { kPeak, kAverage };

// "peak" or "average".
const char* BudgetPowerName(BudgetPower budget_power);
// Whether every point has its peak 1-s power (the default for budgets is then the peak).
bool HasPeakPower(const std::vector<FrontierPoint>& points);

// `name` ("peak", "average"; empty: peak when every point has its peak power, else average).
BudgetPower BudgetPowerFor(const std::string& name, const std::vector<FrontierPoint>& points);
// `name` ("cost", "carbon", "energy"; empty: cost with a price series, else carbon with a carbon
// series, else energy).
Objective ObjectiveFor(const std::string& name, bool has_price, bool has_carbon);

// Fails on kPeak when a point has no peak power, naming `source`.
Result<std::vector<JobPlan>> JobPlansFromFrontier(const std::vector<FrontierPoint>& points, int pipelines,
                                                  BudgetPower budget_power, const std::string& source);

}  // namespace wattcut::deadline
