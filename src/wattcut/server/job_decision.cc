#include "wattcut/server/job_decision.h"

#include "wattcut/server/deadline_following.h"
#include "wattcut/server/deployment.h"

namespace wattcut::server {

ScheduleDecision Decide(Job& job, double now_unix_s, bool may_start_profiling) {
  ScheduleInputs in;
  in.job_id = job.id();
  in.frontier_state = job.frontier_state();
  in.frontier = job.frontier().get();
  in.selection = job.selection();
  in.stragglers = job.stragglers();
  in.num_microbatches = job.planner().num_microbatches;
  in.has_profile = job.profile() != nullptr;
  in.sweep = job.sweep().state();
  in.profiling_min_freq_mhz = job.planner().profiling_min_freq_mhz;
  in.may_start_profiling = may_start_profiling;
  if (job.frontier_state() != FrontierState::kReady && job.planner().num_microbatches >= 1) {
    if (auto order = job.InstructionOrder(); !order) in.schedule_error = order.error().message;
  }
  if (!job.sweep().active() && may_start_profiling) {
    for (const auto& r : job.ranks()) {
      if (r) in.declared_freqs_mhz.push_back(r->available_frequencies);
    }
  }
  ScheduleDecision d = DecideSchedule(in);
  // A power target holds every pipeline (stragglers too) to its point.
  if (d.mode == ScheduleDecision::Mode::kPlan && job.power_target() && job.frontier()) {
    CapDecision(d, PointForPowerTarget(*job.frontier(), *job.power_target()).index);
  }
  // A deadline schedule holds them to its point of the moment the same way.
  if (d.mode == ScheduleDecision::Mode::kPlan && job.deadline() && job.frontier() &&
      job.deadline()->frontier_generation == job.frontier_generation()) {
    if (const std::optional<size_t> cap = DeadlineCap(*job.deadline(), now_unix_s)) CapDecision(d, *cap);
  }
  return d;
}

}  // namespace wattcut::server
