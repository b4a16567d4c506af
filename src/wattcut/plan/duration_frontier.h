// The part of a frontier every kind of job shares: its points, ordered from the slowest (the
// all-slowest start point, T_max) to the fastest (T_min), each one unit time faster than the one
// before, and, compactly, every computation's planned duration at each point: the durations of
// the first point plus, for each later point, the computations whose planned duration changed
// (with a checkpoint of all durations every 256 points, so a point's durations are rebuilt in
// O(computations + changes since its checkpoint)).
//
// What a duration means to the job (a pipeline computation's frequency, a generic DAG
// operation's knob) is the concern of the two frontiers built on this one: Frontier
// (plan/frontier.h, pipelines) and DagFrontier (plan/dag_frontier.h, generic DAGs). The
// lookups of plan/plan_lookup.h and the power sweep of plan/frontier_power.h work on both.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace wattcut {

struct FrontierPoint {
  int64_t duration_units = 0;     // critical path length, in unit times
  double time_s = 0;              // duration_units * unit_time_s
  double energy_j = 0;            // the whole job's, blocking energy included
  double effective_energy_j = 0;  // sum of the computations' effective energies (cost model)
  // The largest average power of the whole job over any 1-s window of its execution timeline
  // (plan/frontier_power.h); absent when it was not computed (a frontier file written
  // without it).
  std::optional<double> peak_1s_power_w = std::nullopt;
};

struct DurationChange {
  int32_t computation = 0;  // index into the flat computation list
  int64_t duration_units = 0;
};

class DurationFrontier {
 public:
  DurationFrontier() = default;
  // `num_devices`: the GPUs (devices) the job's power is divided by for "per GPU" figures.
  DurationFrontier(std::vector<int64_t> start_durations, int num_devices)
      : start_durations_(std::move(start_durations)), num_devices_(num_devices) {}

  // Appends a point whose durations differ from the previous one by `changes` (ignored for
  // the first point, which is the start durations).
  void AddPoint(const FrontierPoint& point, std::vector<DurationChange> changes);
  // Sets point `index`'s peak 1-s power (computed after the points, from their timelines).
  void SetPeakPower(size_t index, double peak_1s_power_w) { points_.at(index).peak_1s_power_w = peak_1s_power_w; }

  const std::vector<FrontierPoint>& points() const { return points_; }
  int num_computations() const { return static_cast<int>(start_durations_.size()); }
  int num_devices() const { return num_devices_; }

  // Index of the fastest point (T_min): the last one.
  size_t fastest_index() const { return points_.size() - 1; }
  // Index of the minimum-energy point (T*); the fastest among ties.
  size_t min_energy_index() const;
  // The point to deploy when the iteration must not be faster than `time_s` (a straggler's
  // iteration time T'): the least-energy point whose time is <= time_s, i.e. the point at
  // min(T', T*). Returns fastest_index() when time_s < T_min.
  size_t IndexForIterationTime(double time_s) const;

  // The durations of the first point, and the changes that lead to point `index` from the one
  // before (empty for the first): the frontier's compact form (its files write exactly these).
  const std::vector<int64_t>& start_durations() const { return start_durations_; }
  const std::vector<DurationChange>& ChangesAt(size_t index) const { return changes_.at(index); }

  // Planned duration of every computation (flat) at point `index`.
  std::vector<int64_t> DurationsAt(size_t index) const;

 private:
  std::vector<int64_t> start_durations_;
  int num_devices_ = 0;
  std::vector<FrontierPoint> points_;
  std::vector<std::vector<DurationChange>> changes_;  // changes_[i]: from point i-1 to i
  std::vector<std::vector<int64_t>> checkpoints_;     // durations every kCheckpointStride points
};

}  // namespace wattcut
