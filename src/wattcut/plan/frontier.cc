#include "wattcut/plan/frontier.h"

#include <algorithm>

namespace wattcut {
namespace {
constexpr size_t kCheckpointStride = 256;
}

Frontier::Frontier(Setup setup, std::vector<int64_t> start_durations)
    : setup_(std::move(setup)), start_durations_(std::move(start_durations)) {}

void Frontier::AddPoint(const FrontierPoint& point, std::vector<DurationChange> changes) {
  if (points_.empty()) changes.clear();  // the first point is the start durations
  if (points_.size() % kCheckpointStride == 0) {
    std::vector<int64_t> durations = points_.empty() ? start_durations_ : DurationsAt(points_.size() - 1);
    for (const DurationChange& c : changes) durations[static_cast<size_t>(c.computation)] = c.duration_units;
    checkpoints_.push_back(std::move(durations));
  }
  points_.push_back(point);
  changes_.push_back(std::move(changes));
}

size_t Frontier::min_energy_index() const {
  size_t best = 0;
  for (size_t i = 1; i < points_.size(); ++i) {
    if (points_[i].energy_j <= points_[best].energy_j) best = i;
  }
  return best;
}

size_t Frontier::IndexForIterationTime(double time_s) const {
  // Least energy among points no slower than time_s; points run slowest -> fastest.
  size_t best = points_.size();
  for (size_t i = 0; i < points_.size(); ++i) {
    if (points_[i].time_s > time_s + 1e-12) continue;
    if (best == points_.size() || points_[i].energy_j < points_[best].energy_j) best = i;
  }
  return best == points_.size() ? fastest_index() : best;
}

std::vector<int64_t> Frontier::DurationsAt(size_t index) const {
  size_t checkpoint = index / kCheckpointStride;
  std::vector<int64_t> durations = checkpoints_.at(checkpoint);
  for (size_t i = checkpoint * kCheckpointStride + 1; i <= index; ++i) {
    for (const DurationChange& c : changes_[i]) durations[static_cast<size_t>(c.computation)] = c.duration_units;
  }
  return durations;
}

FrequencyPlan Frontier::PlanAt(size_t index) const {
  std::vector<int64_t> durations = DurationsAt(index);
  FrequencyPlan plan;
  size_t flat = 0;
  const int num_devices = static_cast<int>(setup_.schedule.size());
  for (size_t s = 0; s < setup_.schedule.size(); ++s) {
    auto& stage = plan.stages.emplace_back();
    for (const Computation& c : setup_.schedule[s]) {
      int64_t d = durations[flat++];
      const auto piece = static_cast<size_t>(ProfileStageOf(static_cast<int>(s), c.chunk, num_devices));
      const auto& options = setup_.options[piece][static_cast<size_t>(c.kind)];
      // Slowest option whose duration <= d; the fastest when none is.
      auto it = std::upper_bound(options.begin(), options.end(), d,
                                 [](int64_t value, const auto& option) { return value < option.first; });
      int freq = it == options.begin() ? options.front().second : std::prev(it)->second;
      stage.push_back(PlannedComputation{c.kind, c.microbatch, freq, d, c.chunk});
    }
  }
  return plan;
}

}  // namespace wattcut
