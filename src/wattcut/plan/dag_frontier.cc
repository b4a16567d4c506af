#include "wattcut/plan/dag_frontier.h"

#include <algorithm>

namespace wattcut {

DagFrontier::DagFrontier(Setup setup, std::vector<int64_t> start_durations)
    : DurationFrontier(std::move(start_durations), static_cast<int>(setup.devices.size())), setup_(std::move(setup)) {}

double DagFrontier::blocking_power_w() const {
  double watts = 0;
  for (const Device& device : setup_.devices) watts += device.blocking_power_w;
  return watts;
}

int DagFrontier::KnobFor(int op, int64_t duration_units) const {
  const auto& options = setup_.operations.at(static_cast<size_t>(op)).options;
  auto it = std::upper_bound(options.begin(), options.end(), duration_units,
                             [](int64_t d, const std::pair<int64_t, int>& o) { return d < o.first; });
  return it == options.begin() ? options.front().second : std::prev(it)->second;
}

std::vector<int> DagFrontier::KnobsAt(size_t index) const {
  const std::vector<int64_t> durations = DurationsAt(index);
  std::vector<int> knobs(durations.size());
  for (size_t op = 0; op < durations.size(); ++op) knobs[op] = KnobFor(static_cast<int>(op), durations[op]);
  return knobs;
}

}  // namespace wattcut
