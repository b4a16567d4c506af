#include "wattcut/emulate/all_max.h"

#include <algorithm>

#include "wattcut/emulate/pipeline_execution.h"

namespace wattcut {

double AllMaxIterationTime(const Profile& profile, const PipelineSchedule& schedule) {
  std::vector<std::vector<double>> durations(schedule.size());
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (const Computation& c : schedule[s]) {
      durations[s].push_back(profile.fastest_measurement(static_cast<int>(s), c.kind).time_s);
    }
  }
  return ExecutePipeline(schedule, durations).iteration_time_s;
}

double AllMaxEnergy(const Profile& profile, const PipelineSchedule& schedule, double iteration_time_s,
                    double p2p_power_w) {
  double energy = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    double compute_s = 0;
    for (const Computation& c : schedule[s]) {
      const Measurement& m = profile.fastest_measurement(static_cast<int>(s), c.kind);
      energy += m.energy_j;
      compute_s += m.time_s;
    }
    energy += p2p_power_w * std::max(0.0, iteration_time_s - compute_s);
  }
  return energy;
}

}  // namespace wattcut
