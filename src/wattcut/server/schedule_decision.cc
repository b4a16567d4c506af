#include "wattcut/server/schedule_decision.h"

#include <algorithm>

namespace wattcut::server {

size_t SelectedIndex(const Frontier& frontier, const PlanSelection& selection) {
  switch (selection.kind) {
    case PlanSelection::Kind::kFastest:
      return frontier.fastest_index();
    case PlanSelection::Kind::kMinEnergy:
      return frontier.min_energy_index();
    case PlanSelection::Kind::kIndex:
      return std::min(static_cast<size_t>(selection.value), frontier.fastest_index());
    case PlanSelection::Kind::kIterationTime:
      return frontier.IndexForIterationTime(selection.value);
  }
  return frontier.fastest_index();
}

double StragglerIterationTime(const Frontier& frontier, size_t base_index, const Stragglers& stragglers) {
  double t = 0;
  for (const auto& [dp, s] : stragglers) {
    double v = s.kind == StragglerReport::Kind::kSlowdown ? s.value * frontier.points()[base_index].time_s : s.value;
    t = std::max(t, v);
  }
  return t;
}

ScheduleDecision DecideSchedule(const ScheduleInputs& in) {
  using Mode = ScheduleDecision::Mode;
  ScheduleDecision d;
  if (in.frontier_state == FrontierState::kReady && in.frontier != nullptr) {
    d.mode = Mode::kPlan;
    d.base_index = SelectedIndex(*in.frontier, in.selection);
    d.non_straggler_index = d.base_index;
    if (!in.stragglers.empty()) {
      d.straggler_time_s = StragglerIterationTime(*in.frontier, d.base_index, in.stragglers);
      d.non_straggler_index = in.frontier->IndexForIterationTime(d.straggler_time_s);
      for (const auto& [dp, s] : in.stragglers) d.straggler_dp.insert(dp);
    }
    return d;
  }
  if (in.num_microbatches < 1) {
    d.error = Error::Conflict("job '" + in.job_id +
                              "' has no num_microbatches: set it with PUT /v1/jobs/{job_id}/planner (or start the "
                              "server with --microbatches)");
    return d;
  }
  if (in.schedule_error) {
    d.error = Error::Conflict(*in.schedule_error);
    return d;
  }
  d.mode = Mode::kAllMax;
  if (in.has_profile || in.sweep.done) return d;
  if (!in.sweep.active) {
    if (!in.may_start_profiling) return d;
    std::vector<int> freqs = ProfilingSweep::SweepFrequencies(in.declared_freqs_mhz, in.profiling_min_freq_mhz);
    if (freqs.empty()) return d;
    d.mode = Mode::kProfiling;
    d.profiling_freq_mhz = freqs.front();
    d.start_sweep_freqs_mhz = std::move(freqs);
    return d;
  }
  if (in.sweep.step < in.sweep.freqs_mhz.size()) {
    d.mode = Mode::kProfiling;
    d.profiling_freq_mhz = in.sweep.freqs_mhz[in.sweep.step];
  }
  return d;
}

const char* ScheduleModeName(ScheduleDecision::Mode mode) {
  switch (mode) {
    case ScheduleDecision::Mode::kAllMax:
      return "all_max";
    case ScheduleDecision::Mode::kProfiling:
      return "profiling";
    case ScheduleDecision::Mode::kPlan:
      return "plan";
    case ScheduleDecision::Mode::kError:
      return "error";
  }
  return "error";
}

}  // namespace wattcut::server
