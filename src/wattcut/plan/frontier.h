// The iteration time-energy frontier of one pipeline and the frequency plan of every
// point on it.
//
// Points are ordered from the slowest (the all-slowest start point, T_max) to the
// fastest (T_min); each point is one unit time faster than the one before. Plans are
// stored compactly: the durations of the first point plus, for each later point, the
// computations whose planned duration changed. A plan is rebuilt on demand.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"
#include "wattcut/profile/instruction.h"

namespace wattcut {

struct FrontierPoint {
  int64_t duration_units = 0;     // critical path length, in unit times
  double time_s = 0;              // duration_units * unit_time_s
  double energy_j = 0;            // whole pipeline, blocking energy included (see Frontier)
  double effective_energy_j = 0;  // sum of the computations' effective energies (cost model)
  // The largest average power of the whole pipeline over any 1-s window of its execution
  // timeline (emulate/frontier_power.h); absent when it was not computed (a frontier file
  // written without it).
  std::optional<double> peak_1s_power_w = std::nullopt;
};

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

struct DurationChange {
  int32_t computation = 0;  // index into the flat computation list (stage-major, schedule order)
  int64_t duration_units = 0;
};

class Frontier {
 public:
  // Everything needed to turn a point's durations back into frequencies.
  struct Setup {
    PipelineSchedule schedule;
    double unit_time_s = 0.001;
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

  // Appends a point whose durations differ from the previous one by `changes`.
  void AddPoint(const FrontierPoint& point, std::vector<DurationChange> changes);
  // Sets point `index`'s peak 1-s power (computed after the points, from their timelines).
  void SetPeakPower(size_t index, double peak_1s_power_w) { points_.at(index).peak_1s_power_w = peak_1s_power_w; }

  const Setup& setup() const { return setup_; }
  const std::vector<FrontierPoint>& points() const { return points_; }
  int num_stages() const { return static_cast<int>(setup_.schedule.size()); }
  int num_computations() const { return static_cast<int>(start_durations_.size()); }

  // Index of the fastest point (T_min): the last one.
  size_t fastest_index() const { return points_.size() - 1; }
  // Index of the minimum-energy point (T*); the fastest among ties.
  size_t min_energy_index() const;
  // The point to deploy when the iteration must not be faster than `time_s` (a
  // straggler's iteration time T'): the least-energy point whose time is <= time_s,
  // i.e. the point at min(T', T*). Returns fastest_index() when time_s < T_min.
  size_t IndexForIterationTime(double time_s) const;

  // The durations of the first point, and the changes that lead to point `index` from the
  // one before (empty for the first): the frontier's compact form (plan/frontier_file.h).
  const std::vector<int64_t>& start_durations() const { return start_durations_; }
  const std::vector<DurationChange>& ChangesAt(size_t index) const { return changes_.at(index); }

  // Planned duration of every computation (flat, stage-major) at point `index`.
  std::vector<int64_t> DurationsAt(size_t index) const;
  // The frequency plan of point `index`.
  FrequencyPlan PlanAt(size_t index) const;

 private:
  Setup setup_;
  std::vector<int64_t> start_durations_;
  std::vector<FrontierPoint> points_;
  std::vector<std::vector<DurationChange>> changes_;  // changes_[i]: from point i-1 to i
  std::vector<std::vector<int64_t>> checkpoints_;     // durations every kCheckpointStride points
};

}  // namespace wattcut
