#include "wattcut/server/job_rounds.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "wattcut/server/job_decision.h"
#include "wattcut/server/job_power_target.h"
#include "wattcut/server/job_profiles.h"
#include "wattcut/server/job_views.h"
#include "wattcut/server/profiling_sweep.h"
#include "wattcut/server/schedule_text.h"

namespace wattcut::server {

using nlohmann::json;

namespace {

// What `d` serves `rank` (registered): its stage's list.
Answer ScheduleAnswer(Job& job, const ScheduleDecision& d, int rank) REQUIRES(job.mu()) {
  const RankInfo& info = *job.ranks()[static_cast<size_t>(rank)];
  switch (d.mode) {
    case ScheduleDecision::Mode::kError:
      return d.error;
    case ScheduleDecision::Mode::kPlan: {
      auto plans = job.PlanSchedules(d.PlanIndexFor(info.dp_rank));
      return FrequencyScheduleJson(rank, (*plans)[static_cast<size_t>(info.pp_rank)]);
    }
    case ScheduleDecision::Mode::kAllMax:
    case ScheduleDecision::Mode::kProfiling: {
      const int freq = d.mode == ScheduleDecision::Mode::kProfiling
                           ? d.profiling_freq_mhz
                           : *std::max_element(info.available_frequencies.begin(), info.available_frequencies.end());
      const auto& order = *job.instruction_order_if_built();
      return FrequencyScheduleJson(rank, UniformStageSchedule(order[static_cast<size_t>(info.pp_rank)], freq));
    }
  }
  return d.error;
}

// A waiter's end: its deadline cancelled, the gauge counted down, then its reply.
void AnswerWaiter(JobContext& ctx, RoundWaiter& waiter, Answer answer) {
  ctx.long_poll_timer.Cancel(waiter.timer_id);
  ctx.metrics.long_polls_waiting().fetch_sub(1);
  if (waiter.reply) waiter.reply(std::move(answer));
}

// The round every rank joined ends: decided (a sweep it starts stored with it), counted, and its
// waiters answered. The round number is bookkeeping: if the write fails the ranks are still
// answered and the next successful write catches up.
void CompleteRound(Job& job, JobContext& ctx) REQUIRES(job.mu()) {
  LapsePowerTarget(job, ctx);
  ScheduleDecision decision = Decide(job, ctx.wall_clock.NowS(), /*may_start_profiling=*/true);
  JobEdit edit;
  if (!decision.start_sweep_freqs_mhz.empty()) {
    ProfilingSweep started = job.sweep();
    started.Start(decision.start_sweep_freqs_mhz);
    edit.sweep = std::move(started);
  }
  edit.complete_round = true;
  job.SetRoundDecision(std::move(decision));
  (void)job.CommitBookkeeping(std::move(edit));
  for (auto& [rank, waiter] : job.TakeRoundWaiters()) {
    AnswerWaiter(ctx, waiter, ScheduleAnswer(job, job.decision(), static_cast<int>(rank)));
  }
}

// A sweep step's measurement of `result`'s rank, stored with the sweep's progress in one
// transaction; the profile is built when it was the sweep's last.
Status RecordSweepStep(Job& job, JobContext& ctx, const ProfilingResult& result) REQUIRES(job.mu()) {
  const size_t r = static_cast<size_t>(result.rank);
  const std::optional<int> freq = job.sweep().current_freq_mhz();
  if (!freq || job.decision().mode != ScheduleDecision::Mode::kProfiling || job.sweep().has_reported(r)) {
    return Status::Ok();  // not a sweep step's result: stored, nothing more
  }
  // Zeus's default ProfilingResult (no breakdowns) measures no computation: stored, and the
  // step waits for this rank's result with breakdowns.
  if (!ProfilingSweep::HasBreakdowns(result)) return Status::Ok();
  auto measured = ProfilingSweep::MeasurementOf(result, *freq);
  if (!measured) return measured.error();
  const RankInfo& info = *job.ranks()[r];
  RankProfile p = job.rank_profile(r).value_or(RankProfile{});
  p.rank = info.rank;
  p.dp_rank = info.dp_rank;
  p.pp_rank = info.pp_rank;
  p.tp_rank = info.tp_rank;
  measured->RecordInto(p, *freq);  // a zero-bubble rank's B and W as measured
  ProfilingSweep next = job.sweep();
  next.Record(r);
  JobEdit edit;
  edit.rank_profile = std::move(p);
  edit.sweep = std::move(next);
  if (Status s = job.Commit(std::move(edit)); !s) return s;
  if (job.sweep().done()) {
    // The result itself is stored; a profile that cannot be built shows as the failed frontier.
    if (Status s = InstallRankProfiles(job, ctx, "server_profiling"); !s) job.SetFrontierFailed(s.error().message);
  }
  return Status::Ok();
}

}  // namespace

std::optional<Answer> FetchSchedule(Job& job, JobContext& ctx, int64_t rank, const ParkRank& park) {
  if (auto found = job.RegisteredRank(rank); !found) return found.error();
  const size_t r = static_cast<size_t>(rank);
  if (job.barrier().is_waiting(r)) {
    return Error::Conflict("job '" + job.id() + "': rank " + std::to_string(rank) +
                           " is already waiting for the schedule of round " +
                           std::to_string(job.barrier().completed_rounds() + 1));
  }
  if (ctx.shutting_down) return Error::Unavailable("the server is shutting down");
  if (job.JoinRound(r)) {
    CompleteRound(job, ctx);
    return ScheduleAnswer(job, job.decision(), static_cast<int>(rank));
  }
  if (ctx.metrics.long_polls_waiting().fetch_add(1) >= ctx.max_long_polls) {
    ctx.metrics.long_polls_waiting().fetch_sub(1);
    job.LeaveRound(r);
    return Error::Unavailable("too many schedule long polls are waiting (limit " + std::to_string(ctx.max_long_polls) +
                              ", --max-long-polls); retry later");
  }
  RoundWaiter waiter;
  waiter.id = job.NextRoundWaiterId();
  const RoundWait wait{job.id(), r, waiter.id};
  waiter.reply = park(wait);
  if (!waiter.reply) {
    ctx.metrics.long_polls_waiting().fetch_sub(1);
    job.LeaveRound(r);
    return Error::Unavailable("this request cannot wait for the round; retry later");
  }
  waiter.timer_id = ctx.long_poll_timer.Add(LongPollTimer::Clock::now() + ctx.long_poll_timeout, wait);
  job.WaitInRound(r, std::move(waiter));
  return std::nullopt;
}

void EndRoundWait(Job& job, JobContext& ctx, const RoundWait& wait, bool timed_out) {
  if (wait.rank >= job.barrier().world_size()) return;
  std::optional<RoundWaiter> waiter = job.LeaveRound(wait.rank, wait.waiter_id);
  if (!waiter) return;  // answered already (its round completed, the job was deleted)
  if (!timed_out) {
    waiter->reply = nullptr;  // its client is gone: nobody to answer
    return AnswerWaiter(ctx, *waiter, Error::Aborted("the client went away"));
  }
  std::string missing;
  for (size_t i : job.barrier().RanksNotWaiting(wait.rank, 16))
    missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  AnswerWaiter(ctx, *waiter,
               Error::DeadlineExceeded(
                   "job '" + job.id() + "': timed out after " + std::to_string(ctx.long_poll_timeout.count()) +
                   " ms waiting for every rank to ask for round " +
                   std::to_string(job.barrier().completed_rounds() + 1) + "; ranks not asking include: " + missing));
}

void AnswerEveryWaiter(Job& job, JobContext& ctx, const Error& error) {
  for (auto& [rank, waiter] : job.TakeRoundWaiters()) AnswerWaiter(ctx, waiter, error);
}

Answer PreviewSchedule(Job& job, JobContext& ctx, int64_t rank) {
  auto found = job.RegisteredRank(rank);
  if (!found) return found.error();
  const ScheduleDecision preview = Decide(job, ctx.wall_clock.NowS(), /*may_start_profiling=*/false);
  Answer answer = ScheduleAnswer(job, preview, static_cast<int>(rank));
  if (!answer) return answer;
  json body = json::parse(*answer);
  body["mode"] = ScheduleModeName(preview.mode);
  body["round"] = job.barrier().completed_rounds() + 1;
  if (preview.mode == ScheduleDecision::Mode::kPlan) body["plan_index"] = preview.PlanIndexFor((*found)->dp_rank);
  return AnswerText(body);
}

Answer PostResult(Job& job, JobContext& ctx, const ProfilingResult& result) {
  JobEdit edit;
  edit.result = result;
  if (Status s = job.Commit(std::move(edit)); !s) return s.error();
  if (Status s = RecordSweepStep(job, ctx, result); !s) return s.error();
  return json(nullptr).dump();
}

}  // namespace wattcut::server
