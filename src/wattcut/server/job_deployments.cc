#include "wattcut/server/job_deployments.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "wattcut/server/job_decision.h"
#include "wattcut/server/schedule_text.h"

namespace wattcut::server {

void Redeploy(Job& job, JobContext& ctx) {
  // The deadline schedule is being computed again (a restart, a new frontier): the ranks keep what
  // they run until it is back, rather than the uncapped plan for a moment.
  if (job.deadline_computations().holds_deployment()) return;
  DeploymentTarget target = DeploymentTarget::From(Decide(job, ctx.wall_clock.NowS(), /*may_start_profiling=*/false),
                                                   job.frontier_generation());
  if (target == job.deployment().target) return;
  if (!target.plan && job.frontier_state() == FrontierState::kComputing) return;
  Deployment next{job.deployment().version + 1, job.progress().ApplyStep(DeploymentLeadS(job.info().world_size)),
                  std::move(target)};
  JobEdit edit;
  edit.deployment = std::move(next);
  (void)job.CommitBookkeeping(std::move(edit));
  ctx.metrics.RecordPlanSwitch();
}

Answer DeploymentAnswer(Job& job, JobContext& ctx, const RankInfo& rank, uint64_t version) {
  const Deployment& d = job.deployment();
  const std::string head = "{\"version\":" + std::to_string(d.version) + ",\"poll_interval_s\":" +
                           nlohmann::json(DeploymentPollIntervalS(job.info().world_size)).dump();
  if (version == d.version) return head + "}";
  std::string body = head + ",\"apply_from_step\":" + std::to_string(d.apply_from_step);
  if (d.target.plan && job.frontier()) {
    const size_t index = d.target.PlanIndexFor(rank.dp_rank);
    auto plans = job.PlanSchedules(index);
    return body + ",\"mode\":\"plan\",\"plan_index\":" + std::to_string(index) +
           ",\"frequencies\":" + (*plans)[static_cast<size_t>(rank.pp_rank)] + "}";
  }
  // AllMax: the rank's instructions in order, at its highest declared clock.
  ScheduleDecision all_max = Decide(job, ctx.wall_clock.NowS(), /*may_start_profiling=*/false);
  if (all_max.mode == ScheduleDecision::Mode::kError) return all_max.error;
  const auto& order = job.instruction_order_if_built();
  if (!order) return Error::Conflict("job '" + job.id() + "': its instruction order is not known yet");
  const int freq = *std::max_element(rank.available_frequencies.begin(), rank.available_frequencies.end());
  return body + ",\"mode\":\"all_max\",\"frequencies\":" +
         UniformStageSchedule((*order)[static_cast<size_t>(rank.pp_rank)], freq) + "}";
}

}  // namespace wattcut::server
