#include "wattcut/plan/duration_frontier.h"

namespace wattcut {
namespace {
constexpr size_t kCheckpointStride = 256;
}

void DurationFrontier::AddPoint(const FrontierPoint& point, std::vector<DurationChange> changes) {
  if (points_.empty()) changes.clear();  // the first point is the start durations
  if (points_.size() % kCheckpointStride == 0) {
    std::vector<int64_t> durations = points_.empty() ? start_durations_ : DurationsAt(points_.size() - 1);
    for (const DurationChange& c : changes) durations[static_cast<size_t>(c.computation)] = c.duration_units;
    checkpoints_.push_back(std::move(durations));
  }
  points_.push_back(point);
  changes_.push_back(std::move(changes));
}

size_t DurationFrontier::min_energy_index() const {
  size_t best = 0;
  for (size_t i = 1; i < points_.size(); ++i) {
    if (points_[i].energy_j <= points_[best].energy_j) best = i;
  }
  return best;
}

size_t DurationFrontier::IndexForIterationTime(double time_s) const {
  // Least energy among points no slower than time_s; points run slowest -> fastest.
  size_t best = points_.size();
  for (size_t i = 0; i < points_.size(); ++i) {
    if (points_[i].time_s > time_s + 1e-12) continue;
    if (best == points_.size() || points_[i].energy_j < points_[best].energy_j) best = i;
  }
  return best == points_.size() ? fastest_index() : best;
}

std::vector<int64_t> DurationFrontier::DurationsAt(size_t index) const {
  size_t checkpoint = index / kCheckpointStride;
  std::vector<int64_t> durations = checkpoints_.at(checkpoint);
  for (size_t i = checkpoint * kCheckpointStride + 1; i <= index; ++i) {
    for (const DurationChange& c : changes_[i]) durations[static_cast<size_t>(c.computation)] = c.duration_units;
  }
  return durations;
}

}  // namespace wattcut
