#include "wattcut/emulate/all_max.h"

#include <algorithm>
#include <array>
#include <vector>

#include "wattcut/emulate/pipeline_execution.h"

namespace wattcut {

namespace {

// The highest-frequency measurement of every (stage, instruction), found once: a profile
// may have thousands of rows per pair and a schedule a million computations.
std::vector<std::array<Measurement, kNumInstructionKinds>> Fastest(const Profile& profile, size_t num_stages) {
  std::vector<std::array<Measurement, kNumInstructionKinds>> fastest(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    for (InstructionKind kind : {InstructionKind::kForward, InstructionKind::kBackward}) {
      fastest[s][static_cast<size_t>(kind)] = profile.fastest_measurement(static_cast<int>(s), kind);
    }
  }
  return fastest;
}

}  // namespace

double AllMaxIterationTime(const Profile& profile, const PipelineSchedule& schedule) {
  const auto fastest = Fastest(profile, schedule.size());
  std::vector<std::vector<double>> durations(schedule.size());
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (const Computation& c : schedule[s]) durations[s].push_back(fastest[s][static_cast<size_t>(c.kind)].time_s);
  }
  return ExecutePipeline(schedule, durations).iteration_time_s;
}

double AllMaxEnergy(const Profile& profile, const PipelineSchedule& schedule, double iteration_time_s,
                    double p2p_power_w) {
  const auto fastest = Fastest(profile, schedule.size());
  double energy = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    double compute_s = 0;
    for (const Computation& c : schedule[s]) {
      const Measurement& m = fastest[s][static_cast<size_t>(c.kind)];
      energy += m.energy_j;
      compute_s += m.time_s;
    }
    energy += p2p_power_w * std::max(0.0, iteration_time_s - compute_s);
  }
  return energy;
}

}  // namespace wattcut
