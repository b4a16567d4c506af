// The pictures of a deadline schedule (`wattcut plan schedule`, docs/deadline.md):
//  * power: the job's power over time for the schedule and both baselines, over a background
//    shaded by the price (or carbon) of each interval, darker where dearer;
//  * progress: the share of the iterations done over time, with the deadline.
#pragma once

#include <string>

#include "wattcut/deadline/deadline_scheduler.h"
#include "wattcut/plot/chart.h"

namespace wattcut::deadline {

plot::Chart SchedulePowerChart(const Schedule& schedule, const ScheduleRequest& request);
plot::Chart ScheduleProgressChart(const Schedule& schedule, const ScheduleRequest& request);

}  // namespace wattcut::deadline
