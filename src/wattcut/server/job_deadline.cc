#include "wattcut/server/job_deadline.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/deadline/schedule_following.h"
#include "wattcut/server/deadline_following.h"
#include "wattcut/server/job_decision.h"
#include "wattcut/server/job_deployments.h"
#include "wattcut/server/job_views.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

// The schedule as GET answers it.
Answer DeadlineAnswer(Job& job, JobContext& ctx) REQUIRES(job.mu()) {
  return AnswerText(DeadlineJson(job.id(), *job.deadline(), job.progress().max_step(), ctx.wall_clock.NowS(),
                                 job.deadline_computations().in_flight()));
}

// A background computation of `following` on the job's ready frontier, begun.
DeadlineTask BeginTask(Job& job, DeadlineTask::Why why, DeadlineFollowing following, double now_s) REQUIRES(job.mu()) {
  DeadlineTask task;
  task.why = why;
  task.job_id = job.id();
  task.cancel = std::make_shared<std::atomic<bool>>(false);
  using Hold = DeadlineComputations::Hold;
  const Hold hold = why == DeadlineTask::Why::kRestore       ? Hold::kDeploymentNotKnown
                    : why == DeadlineTask::Why::kNewFrontier ? Hold::kDeployment
                                                             : Hold::kNothing;
  task.ticket = job.deadline_computations().Begin(task.cancel, hold);
  task.following = std::move(following);
  task.frontier = job.frontier();
  task.info = job.info();
  task.now_s = now_s;
  return task;
}

}  // namespace

Result<DeadlineComputation> BeginSetDeadline(Job& job, JobContext& ctx, const DeadlineScheduleSpec& spec) {
  if (!job.ready_frontier()) {
    return Error::Conflict("job '" + job.id() + "': its frontier is not ready (" +
                           std::string(FrontierStateName(job.frontier_state())) +
                           "): a deadline schedule is planned on it");
  }
  if (ctx.shutting_down) return Error::Unavailable("the server is shutting down");
  DeadlineComputation c;
  c.now_s = ctx.wall_clock.NowS();
  c.following = DeadlineFollowing{spec, {}, {}, job.frontier_generation(), {}};
  c.following.spec.from_step = job.progress().max_step();
  c.following.spec.replans = 0;
  if (c.following.spec.start.empty()) c.following.spec.start = FormatTimestamp(c.now_s);
  c.frontier = job.frontier();
  c.info = job.info();
  c.cancel = std::make_shared<std::atomic<bool>>(false);
  c.ticket = job.deadline_computations().Begin(c.cancel, DeadlineComputations::Hold::kNothing);
  return c;
}

Answer FinishSetDeadline(Job& job, JobContext& ctx, DeadlineComputation computation, const Status& computed) {
  if (ctx.shutting_down) {
    job.deadline_computations().End(computation.ticket);
    return Error::Unavailable("the server is shutting down: the deadline schedule was not set");
  }
  if (!job.deadline_computations().IsCurrent(computation.ticket)) {
    return Error::Conflict("job '" + job.id() +
                           "': a newer PUT or a DELETE of its deadline schedule came while this one was computed; "
                           "this one changed nothing");
  }
  job.deadline_computations().End(computation.ticket);
  if (!computed) return computed.error();
  JobEdit edit;
  edit.deadline = std::move(computation.following);
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  Redeploy(job, ctx);
  const DeadlineFollowing& set = *job.deadline();
  std::fprintf(stderr, "wattcut serve: job %s: deadline schedule set: %s iterations by %s, deployment version %llu\n",
               PrintableText(job.id()).c_str(), GeneralText(set.spec.iterations).c_str(),
               PrintableText(set.spec.deadline).c_str(), static_cast<unsigned long long>(job.deployment().version));
  return DeadlineAnswer(job, ctx);
}

Answer ClearDeadlineSchedule(Job& job, JobContext& ctx) {
  JobEdit edit;
  edit.deadline = std::optional<DeadlineFollowing>();
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  job.deadline_computations().Cancel();
  Redeploy(job, ctx);
  return AnswerText(json{{"job_id", job.id()}, {"schedule", nullptr}});
}

Answer GetDeadlineSchedule(Job& job, JobContext& ctx) {
  if (!job.deadline()) return Error::NotFound("job '" + job.id() + "' has no deadline schedule");
  StartDeadlineOnNewFrontier(job, ctx);
  return DeadlineAnswer(job, ctx);
}

namespace {

void StartDeadline(Job& job, JobContext& ctx, DeadlineTask::Why why) REQUIRES(job.mu()) {
  if (!job.deadline() || !job.ready_frontier() || job.deadline()->frontier_generation == job.frontier_generation() ||
      job.deadline_computations().in_flight() || ctx.shutting_down) {
    return;
  }
  DeadlineFollowing f{job.deadline()->spec, {}, {}, job.frontier_generation(), {}};
  ctx.deadline_worker.Submit(BeginTask(job, why, std::move(f), ctx.wall_clock.NowS()));
}

}  // namespace

void StartDeadlineAfterRestore(Job& job, JobContext& ctx) { StartDeadline(job, ctx, DeadlineTask::Why::kRestore); }

void StartDeadlineOnNewFrontier(Job& job, JobContext& ctx) { StartDeadline(job, ctx, DeadlineTask::Why::kNewFrontier); }

void FollowDeadline(Job& job, JobContext& ctx) {
  if (!job.deadline() || !job.ready_frontier()) return;
  const double now = ctx.wall_clock.NowS();
  StartDeadlineOnNewFrontier(job, ctx);
  const DeadlineFollowing& f = *job.deadline();
  const StepProgress& progress = job.progress();
  // Every rank has reported since the server started: the job's step is known.
  if (!job.deadline_computations().in_flight() && f.schedule && progress.min_step() && !ctx.shutting_down &&
      DeadlineNeedsReplan(f, progress.max_step(), now)) {
    DeadlineTask task =
        BeginTask(job, DeadlineTask::Why::kReplan,
                  {ReplanSpec(f, progress.max_step(), now), {}, {}, job.frontier_generation(), {}}, now);
    task.done_iterations = static_cast<double>(progress.max_step() - f.spec.from_step);
    task.expected_iterations = deadline::IterationsDoneBy(*f.schedule, now);
    ctx.deadline_worker.Submit(std::move(task));
  }
  Redeploy(job, ctx);
}

void ApplyDeadlineDone(Job& job, JobContext& ctx, DeadlineTask task, const Status& computed) {
  if (!job.deadline_computations().IsCurrent(task.ticket)) return;  // superseded, cleared or deleted
  job.deadline_computations().End(task.ticket);
  if (!job.deadline()) return;
  if (!computed && computed.error().code == ErrorCode::kAborted) return;  // the server is stopping
  if (task.why != DeadlineTask::Why::kReplan) {
    if (!computed) task.following.error = computed.error().message;
    (void)job.RefreshDeadline(std::move(task.following));
    if (task.why == DeadlineTask::Why::kRestore) {
      // What the stored version held, decided again with its cap: nothing new for the ranks.
      job.SetDeploymentTargetAfterRestore(DeploymentTarget::From(
          Decide(job, ctx.wall_clock.NowS(), /*may_start_profiling=*/false), job.frontier_generation()));
    }
    Redeploy(job, ctx);
    return;
  }
  DeadlineFollowing next = std::move(task.following);
  if (!computed) {
    // The job stays uncapped until a new PUT: the deadline cannot be met from here.
    next.schedule.reset();
    next.request.reset();
    next.error = "replan " + std::to_string(next.spec.replans) + " at step " + std::to_string(next.spec.from_step) +
                 ": " + computed.error().message;
  }
  JobEdit edit;
  edit.deadline = std::move(next);
  if (!job.Commit(std::move(edit))) return;  // kept as stored; the next poll tries again
  const DeadlineFollowing& replanned = *job.deadline();
  std::fprintf(stderr, "wattcut serve: job %s: deadline schedule replanned (%s done, %s expected by now): %s\n",
               PrintableText(job.id()).c_str(), GeneralText(task.done_iterations).c_str(),
               GeneralText(task.expected_iterations).c_str(),
               replanned.error.empty() ? "following the new schedule" : replanned.error.c_str());
  Redeploy(job, ctx);
}

}  // namespace wattcut::server
