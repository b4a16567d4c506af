#include "wattcut/plan/frontier.h"

#include <algorithm>

namespace wattcut {

Frontier::Frontier(Setup setup, std::vector<int64_t> start_durations)
    : DurationFrontier(std::move(start_durations), static_cast<int>(setup.schedule.size())), setup_(std::move(setup)) {}

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
