// The iteration time-energy frontier of one pipeline and the frequency plan of every
// point on it: the points and planned durations of a DurationFrontier (plan/
// duration_frontier.h; computations flat, stage-major, in schedule order), plus what turns a
// point's durations back into frequencies. A plan is rebuilt on demand.
#pragma once

#include <cstdint>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/plan/duration_frontier.h"
#include "wattcut/plan/planner_defaults.h"
#include "wattcut/profile/instruction.h"

namespace wattcut {

struct PlannedComputation {
  InstructionKind kind = InstructionKind::kForward;
  int microbatch = 0;
  int freq_mhz = 0;
  int64_t duration_units = 0;  // planned duration, in unit times
  int chunk = 0;               // the device's model chunk (0 unless the schedule is interleaved)
};

// Per stage (pipeline device), the computations in execution order with their frequencies.
struct FrequencyPlan {
  std::vector<std::vector<PlannedComputation>> stages;
};

class Frontier : public DurationFrontier {
 public:
  // Everything needed to turn a point's durations back into frequencies.
  struct Setup {
    PipelineSchedule schedule;
    double unit_time_s = kDefaultUnitTimeS;
    double p2p_power_w = 0;
    // options[profile stage][kind]: (duration_units, freq_mhz) sorted by duration
    // ascending; the plan runs the slowest option whose duration <= the planned one. One
    // entry per profile stage (model piece: ProfileStageOf(device, chunk, devices), so
    // devices x chunks of them), indexed by kind: forward and backward, or all
    // kNumInstructionKinds (empty when unused).
    std::vector<std::vector<std::vector<std::pair<int64_t, int>>>> options;
  };

  Frontier() = default;
  Frontier(Setup setup, std::vector<int64_t> start_durations);

  const Setup& setup() const { return setup_; }
  int num_stages() const { return static_cast<int>(setup_.schedule.size()); }

  // The frequency plan of point `index`.
  FrequencyPlan PlanAt(size_t index) const;

 private:
  Setup setup_;
};

}  // namespace wattcut
