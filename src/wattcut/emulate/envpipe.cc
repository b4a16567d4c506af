#include "wattcut/emulate/envpipe.h"

#include <algorithm>

#include "wattcut/plan/all_max.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {

EnvPipePlan PlanEnvPipe(const Profile& profile, const PipelineSchedule& schedule, double p2p_power_w) {
  const size_t num_stages = schedule.size();
  // Pareto-optimal options per (stage, kind), fastest (highest frequency) first.
  std::vector<std::vector<std::vector<Measurement>>> options(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      std::vector<Measurement> kept = ParetoFilter(profile.measurements(static_cast<int>(s), kind), 1.0);
      std::sort(kept.begin(), kept.end(),
                [](const Measurement& a, const Measurement& b) { return a.freq_mhz > b.freq_mhz; });
      options[s].push_back(std::move(kept));
    }
  }
  // Option index per computation: 0 = fastest.
  std::vector<std::vector<size_t>> choice(num_stages);
  std::vector<std::vector<bool>> envelope(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    const auto& list = schedule[s];
    size_t first_forward = list.size(), last_backward = list.size();
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].kind == InstructionKind::kForward && first_forward == list.size()) first_forward = i;
      if (list[i].kind == InstructionKind::kBackward) last_backward = i;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      bool on_envelope = s + 1 == num_stages || i == first_forward || i == last_backward;
      envelope[s].push_back(on_envelope);
      size_t slowest = options[s][static_cast<size_t>(list[i].kind)].size() - 1;
      choice[s].push_back(on_envelope ? 0 : slowest);
    }
  }
  auto durations = [&]() {
    std::vector<std::vector<double>> d(num_stages);
    for (size_t s = 0; s < num_stages; ++s) {
      for (size_t i = 0; i < schedule[s].size(); ++i) {
        d[s].push_back(options[s][static_cast<size_t>(schedule[s][i].kind)][choice[s][i]].time_s);
      }
    }
    return d;
  };
  const double target_s = AllMaxIterationTime(profile, schedule);
  EnvPipePlan plan;
  plan.execution = ExecutePipeline(schedule, durations());
  const double tolerance = 1e-9 * target_s;
  while (plan.execution.iteration_time_s > target_s + tolerance) {
    bool raised = false;
    for (size_t s = 0; s < num_stages; ++s) {
      for (size_t i = 0; i < schedule[s].size(); ++i) {
        if (envelope[s][i] || choice[s][i] == 0) continue;
        if (plan.execution.timing[s][i].slack_s > tolerance) continue;  // not critical
        --choice[s][i];
        raised = true;
      }
    }
    if (!raised) break;
    ++plan.rounds;
    plan.execution = ExecutePipeline(schedule, durations());
  }
  plan.iteration_time_s = plan.execution.iteration_time_s;
  plan.freq_mhz.resize(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    double compute_s = 0;
    for (size_t i = 0; i < schedule[s].size(); ++i) {
      const Measurement& m = options[s][static_cast<size_t>(schedule[s][i].kind)][choice[s][i]];
      plan.freq_mhz[s].push_back(m.freq_mhz);
      plan.energy_j += m.energy_j;
      compute_s += m.time_s;
    }
    plan.energy_j += p2p_power_w * std::max(0.0, plan.iteration_time_s - compute_s);
  }
  return plan;
}

}  // namespace wattcut
