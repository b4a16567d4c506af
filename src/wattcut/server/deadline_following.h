// A job's deadline schedule on the planning server (PUT /v1/jobs/{id}/deadline_schedule,
// docs/deadline.md): the spec it was given, the schedule computed from it on the job's frontier,
// and the rules by which the job follows it. The registry (job_registry.h) owns one per job,
// stores the spec in the job's state and applies what these functions decide:
//
//  * Computing: the spec's series (CSV text) are read as `wattcut plan schedule` reads its files,
//    named "deadline_schedule.price_csv" and so on in errors; the plans are the frontier's points
//    for the job's pipelines (the spec's, else the job's dp_degree). The schedule is computed again
//    from the stored spec after a restart: the same inputs give the same schedule.
//  * Following: the point in force now (deadline/schedule_following.h) caps every pipeline, as a
//    power target does: a straggler's slower point, or a lower power target, still wins.
//  * Replanning: when the job's done iterations (its fastest rank's step less the spec's
//    from_step) differ from what the schedule expected by then by more than replan_margin x the
//    iterations, the remaining ones are planned again from now, and from_step, start and
//    iterations move to now. A replan that cannot meet the deadline leaves the job uncapped (its
//    own selection, as without a schedule) and says why in GET's "following".
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "wattcut/base/result.h"
#include "wattcut/deadline/deadline_scheduler.h"
#include "wattcut/plan/frontier.h"
#include "wattcut/server/http_api.h"
#include "wattcut/server/status_page.h"

namespace wattcut::server {

struct DeadlineFollowing {
  DeadlineScheduleSpec spec;
  // Computed from spec on the frontier of generation frontier_generation (nullopt: not yet);
  // absent when `error` says why not.
  std::optional<deadline::ScheduleRequest> request;
  std::optional<deadline::Schedule> schedule;
  std::optional<uint64_t> frontier_generation;
  std::string error;
};

// The schedule of `spec` on `frontier` for a job of `info`. `now_s` stands for an empty start.
// `cancelled` is asked as it runs (deadline_scheduler.h): true ends it with kAborted. Takes no
// lock: the registry calls it off the job's (job_deadline.h).
Status ComputeDeadline(DeadlineFollowing& following, const Frontier& frontier, const JobInfo& info, double now_s,
                       std::function<bool()> cancelled = {});

// The point that caps every pipeline at `now_s`, or nullopt (no schedule).
std::optional<size_t> DeadlineCap(const DeadlineFollowing& following, double now_s);

// Whether the job, at `max_step`, is off its schedule by more than the margin at `now_s`.
bool DeadlineNeedsReplan(const DeadlineFollowing& following, int64_t max_step, double now_s);

// The spec of a replan at `now_s` with the job at `max_step`: the remaining iterations from now.
DeadlineScheduleSpec ReplanSpec(const DeadlineFollowing& following, int64_t max_step, double now_s);

// The status page's line (status_page.h).
StatusDeadlineView DeadlineStatus(const DeadlineFollowing& following, int64_t max_step, double now_s);

// GET /v1/jobs/{id}/deadline_schedule: the schedule (deadline/schedule_json.h) and "following":
// {point_now, done_iterations, expected_iterations, replans, from_step, error, computing}, where
// `computing` says a computation of it is in flight (job_deadline.h).
nlohmann::json DeadlineJson(const std::string& job_id, const DeadlineFollowing& following, int64_t max_step,
                            double now_s, bool computing);

}  // namespace wattcut::server
