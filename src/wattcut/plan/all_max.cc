#include "wattcut/plan/all_max.h"

#include <algorithm>
#include <array>
#include <vector>

#include "wattcut/plan/pipeline_execution.h"
#include "wattcut/profile/backward_split.h"

namespace wattcut {

namespace {

// The highest-frequency measurement of every (profile stage, instruction) the schedule
// runs, found once: a profile may have thousands of rows per pair and a schedule a million
// computations. A split backward the profile did not measure is planned as halves of the
// backward (profile/backward_split.h), and so is its AllMax.
std::vector<std::array<Measurement, kNumInstructionKinds>> Fastest(const Profile& measured,
                                                                   const PipelineSchedule& schedule) {
  bool split = false;
  for (const auto& list : schedule) {
    for (const Computation& c : list) split = split || c.kind == InstructionKind::kBackwardInput;
  }
  const Profile halves = split && NeedsBackwardSplit(measured) ? WithSplitBackward(measured) : Profile();
  const Profile& profile = halves.num_stages() > 0 ? halves : measured;
  const auto num_stages = static_cast<size_t>(schedule.size()) * static_cast<size_t>(ScheduleChunks(schedule));
  std::vector<std::array<Measurement, kNumInstructionKinds>> fastest(num_stages);
  for (size_t s = 0; s < num_stages; ++s) {
    for (int k = 0; k < kNumInstructionKinds; ++k) {
      const auto kind = static_cast<InstructionKind>(k);
      if (!profile.measurements(static_cast<int>(s), kind).empty()) {
        fastest[s][static_cast<size_t>(k)] = profile.fastest_measurement(static_cast<int>(s), kind);
      }
    }
  }
  return fastest;
}

// The fastest measurement of a device's computation.
const Measurement& At(const std::vector<std::array<Measurement, kNumInstructionKinds>>& fastest, size_t device,
                      const Computation& c, size_t num_devices) {
  const auto stage =
      static_cast<size_t>(ProfileStageOf(static_cast<int>(device), c.chunk, static_cast<int>(num_devices)));
  return fastest[stage][static_cast<size_t>(c.kind)];
}

}  // namespace

double AllMaxIterationTime(const Profile& profile, const PipelineSchedule& schedule) {
  const auto fastest = Fastest(profile, schedule);
  std::vector<std::vector<double>> durations(schedule.size());
  for (size_t s = 0; s < schedule.size(); ++s) {
    for (const Computation& c : schedule[s]) durations[s].push_back(At(fastest, s, c, schedule.size()).time_s);
  }
  return ExecutePipeline(schedule, durations).iteration_time_s;
}

double AllMaxEnergy(const Profile& profile, const PipelineSchedule& schedule, double iteration_time_s,
                    double p2p_power_w) {
  const auto fastest = Fastest(profile, schedule);
  double energy = 0;
  for (size_t s = 0; s < schedule.size(); ++s) {
    double compute_s = 0;
    for (const Computation& c : schedule[s]) {
      const Measurement& m = At(fastest, s, c, schedule.size());
      energy += m.energy_j;
      compute_s += m.time_s;
    }
    energy += p2p_power_w * std::max(0.0, iteration_time_s - compute_s);
  }
  return energy;
}

}  // namespace wattcut
