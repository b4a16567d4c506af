#include "wattcut/server/job_deadline.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/deadline/schedule_following.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

Answer SetDeadlineSchedule(Job& job, JobContext& ctx, const DeadlineScheduleSpec& spec) {
  if (!job.ready_frontier()) {
    return Error::Conflict("job '" + job.id() + "': its frontier is not ready (" +
                           std::string(FrontierStateName(job.frontier_state())) +
                           "): a deadline schedule is planned on it");
  }
  const double now = ctx.wall_clock.NowS();
  DeadlineFollowing next{spec, {}, {}, job.frontier_generation(), {}};
  next.spec.from_step = job.progress().max_step();
  next.spec.replans = 0;
  if (next.spec.start.empty()) next.spec.start = FormatTimestamp(now);
  if (Status s = ComputeDeadline(next, *job.frontier(), job.info(), now); !s) return s.error();
  JobEdit edit;
  edit.deadline = std::move(next);
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  Redeploy(job, ctx);
  const DeadlineFollowing& set = *job.deadline();
  std::fprintf(stderr, "wattcut serve: job %s: deadline schedule set: %s iterations by %s, deployment version %llu\n",
               PrintableText(job.id()).c_str(), GeneralText(set.spec.iterations).c_str(),
               PrintableText(set.spec.deadline).c_str(), static_cast<unsigned long long>(job.deployment().version));
  return AnswerText(DeadlineJson(job.id(), set, job.progress().max_step(), now));
}

Answer ClearDeadlineSchedule(Job& job, JobContext& ctx) {
  JobEdit edit;
  edit.deadline = std::optional<DeadlineFollowing>();
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  Redeploy(job, ctx);
  return AnswerText(json{{"job_id", job.id()}, {"schedule", nullptr}});
}

Answer GetDeadlineSchedule(Job& job, JobContext& ctx) {
  if (!job.deadline()) return Error::NotFound("job '" + job.id() + "' has no deadline schedule");
  const double now = ctx.wall_clock.NowS();
  DeadlineFollowing shown = *job.deadline();
  if (shown.frontier_generation != job.frontier_generation() && job.ready_frontier()) {
    if (Status s = ComputeDeadline(shown, *job.frontier(), job.info(), now); !s) shown.error = s.error().message;
  }
  return AnswerText(DeadlineJson(job.id(), shown, job.progress().max_step(), now));
}

void ComputeDeadlineOnNewFrontier(Job& job, double now_unix_s) {
  if (!job.deadline() || !job.ready_frontier() || job.deadline()->frontier_generation == job.frontier_generation()) {
    return;
  }
  DeadlineFollowing f{job.deadline()->spec, {}, {}, job.frontier_generation(), {}};
  if (Status s = ComputeDeadline(f, *job.frontier(), job.info(), now_unix_s); !s) f.error = s.error().message;
  (void)job.RefreshDeadline(std::move(f));
}

void FollowDeadline(Job& job, JobContext& ctx) {
  if (!job.deadline() || !job.ready_frontier()) return;
  const double now = ctx.wall_clock.NowS();
  ComputeDeadlineOnNewFrontier(job, now);
  const DeadlineFollowing& f = *job.deadline();
  const StepProgress& progress = job.progress();
  // Every rank has reported since the server started: the job's step is known.
  if (f.schedule && progress.min_step() && DeadlineNeedsReplan(f, progress.max_step(), now)) {
    DeadlineFollowing next{ReplanSpec(f, progress.max_step(), now), {}, {}, job.frontier_generation(), {}};
    const double done = static_cast<double>(progress.max_step() - f.spec.from_step);
    const double expected = deadline::IterationsDoneBy(*f.schedule, now);
    if (Status s = ComputeDeadline(next, *job.frontier(), job.info(), now); !s) {
      // The job stays uncapped until a new PUT: the deadline cannot be met from here.
      next.schedule.reset();
      next.request.reset();
      next.error = "replan " + std::to_string(next.spec.replans) + " at step " + std::to_string(progress.max_step()) +
                   ": " + s.error().message;
    }
    JobEdit edit;
    edit.deadline = std::move(next);
    if (!job.Commit(std::move(edit))) return;  // kept as stored; the next poll tries again
    const DeadlineFollowing& replanned = *job.deadline();
    std::fprintf(stderr, "wattcut serve: job %s: deadline schedule replanned (%s done, %s expected by now): %s\n",
                 PrintableText(job.id()).c_str(), GeneralText(done).c_str(), GeneralText(expected).c_str(),
                 replanned.error.empty() ? "following the new schedule" : replanned.error.c_str());
  }
  Redeploy(job, ctx);
}

}  // namespace wattcut::server
