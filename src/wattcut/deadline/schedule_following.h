// Following a deadline schedule as time passes (the planning server's deadline schedules,
// server/job_registry.h): which frontier point is in force at a time, and how many iterations
// the schedule expected done by then, to compare with the job's reported progress.
#pragma once

#include <optional>

#include "wattcut/deadline/deadline_scheduler.h"

namespace wattcut::deadline {

// The point of the plan share in force at `t_s`: the first share's before the start, the last
// one's after the run is done (the job keeps the plan it finished on); nullopt for a schedule
// without shares.
std::optional<size_t> PointAt(const Schedule& schedule, double t_s);

// The iterations the schedule has done by `t_s` (0 before its first interval, all of them after
// its finish), at each share's rate within it.
double IterationsDoneBy(const Schedule& schedule, double t_s);

// What the schedule has drawn and cost by `t_s`: energy, cost and carbon of its shares up to then
// (NaN without the series), iterations, and finish_s its finish.
ScheduleTotals TotalsBy(const Schedule& schedule, double t_s);

// The start of the next share after `t_s`, where PointAt may change; +infinity when none.
double NextSwitchAfter(const Schedule& schedule, double t_s);

}  // namespace wattcut::deadline
