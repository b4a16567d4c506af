#include "wattcut/emulate/zeus_global.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <set>

#include "wattcut/plan/pipeline_execution.h"
#include "wattcut/profile/operation_options.h"

namespace wattcut {

ZeusGlobal::ZeusGlobal(const Profile& profile, const PipelineSchedule& schedule, double p2p_power_w)
    : p2p_power_w_(p2p_power_w) {
  // Frequencies Pareto-optimal for every (stage, instruction).
  std::set<int> common;
  bool first = true;
  for (int s = 0; s < profile.num_stages(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      std::set<int> here;
      for (const Measurement& m : ParetoFilter(profile.measurements(s, kind), 1.0)) here.insert(m.freq_mhz);
      if (first) {
        common = here;
        first = false;
      } else {
        std::set<int> both;
        std::set_intersection(common.begin(), common.end(), here.begin(), here.end(),
                              std::inserter(both, both.begin()));
        common = both;
      }
    }
  }
  // Each (stage, instruction)'s measurements by frequency: a candidate looks each pair up
  // once, not once per computation in a scan of the pair's rows (a profile may have
  // thousands of frequencies, each one a candidate).
  std::vector<std::array<std::map<int, Measurement>, kNumInstructionKinds>> by_freq(schedule.size());
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      for (const Measurement& m : profile.measurements(static_cast<int>(s), kind)) {
        by_freq[s][static_cast<size_t>(kind)].emplace(m.freq_mhz, m);
      }
    }
  }
  auto measurement_at = [&](int s, InstructionKind kind, int freq) {
    const auto& measurements = by_freq[static_cast<size_t>(s)][static_cast<size_t>(kind)];
    auto it = measurements.find(freq);
    return it != measurements.end() ? it->second : profile.fastest_measurement(s, kind);
  };
  auto run = [&](int freq) {
    std::vector<std::vector<double>> durations(schedule.size());
    Candidate candidate;
    candidate.freq_mhz = freq;
    candidate.stage_compute_s.assign(schedule.size(), 0);
    for (size_t s = 0; s < schedule.size(); ++s) {
      const std::array<Measurement, kNumInstructionKinds> at = {
          measurement_at(static_cast<int>(s), InstructionKind::kForward, freq),
          measurement_at(static_cast<int>(s), InstructionKind::kBackward, freq)};
      for (const Computation& c : schedule[s]) {
        const Measurement& m = at[static_cast<size_t>(c.kind)];
        durations[s].push_back(m.time_s);
        candidate.compute_energy_j += m.energy_j;
        candidate.stage_compute_s[s] += m.time_s;
      }
    }
    candidate.iteration_time_s = ExecutePipeline(schedule, durations).iteration_time_s;
    return candidate;
  };
  highest_ = run(profile.max_freq_mhz());
  for (int freq : common) common_.push_back(run(freq));
}

UniformFrequencyPlan ZeusGlobal::Evaluate(const Candidate& candidate, double deadline_s) const {
  UniformFrequencyPlan plan;
  plan.freq_mhz = candidate.freq_mhz;
  plan.iteration_time_s = candidate.iteration_time_s;
  double end = std::max(deadline_s, plan.iteration_time_s);
  plan.energy_j = candidate.compute_energy_j;
  for (double c : candidate.stage_compute_s) plan.energy_j += p2p_power_w_ * std::max(0.0, end - c);
  return plan;
}

UniformFrequencyPlan ZeusGlobal::Plan(double deadline_s) const {
  UniformFrequencyPlan best = Evaluate(highest_, deadline_s);
  for (const Candidate& candidate : common_) {
    UniformFrequencyPlan plan = Evaluate(candidate, deadline_s);
    if (plan.iteration_time_s <= deadline_s * (1 + 1e-12) && plan.energy_j < best.energy_j) best = plan;
  }
  return best;
}

}  // namespace wattcut
