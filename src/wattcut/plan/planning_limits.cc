#include "wattcut/plan/planning_limits.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "wattcut/base/general_text.h"

namespace wattcut {
namespace {

// Values in messages: six significant digits, %g style.
std::string Text(double value) { return GeneralText(value, 6); }

// A unit time `factor` times coarser, rounded up to two significant digits.
double CoarserUnitTime(double unit_time_s, double factor) {
  const double wanted = unit_time_s * factor;
  const double step = std::pow(10.0, std::floor(std::log10(wanted)) - 1);
  return std::ceil(wanted / step - 1e-9) * step;
}

}  // namespace

Status CheckStages(int num_stages) {
  if (num_stages < 1 || num_stages > kMaxStages) {
    return Error{"pipeline stages must be in [1, " + std::to_string(kMaxStages) + "], got " +
                 std::to_string(num_stages)};
  }
  return Status::Ok();
}

Status CheckMicrobatches(int num_microbatches) {
  if (num_microbatches < 1 || num_microbatches > kMaxMicrobatches) {
    return Error{"microbatches must be in [1, " + std::to_string(kMaxMicrobatches) + "], got " +
                 std::to_string(num_microbatches)};
  }
  return Status::Ok();
}

Status CheckPipelineShape(int num_stages, int num_microbatches, int instructions) {
  if (Status s = CheckStages(num_stages); !s.ok()) return s;
  if (Status s = CheckMicrobatches(num_microbatches); !s.ok()) return s;
  const int64_t computations = int64_t{instructions} * num_stages * num_microbatches;
  if (computations > kMaxComputations) {
    return Error{"computations per iteration (" + std::to_string(instructions) + " x " + std::to_string(num_stages) +
                 " stages x " + std::to_string(num_microbatches) + " microbatches = " + std::to_string(computations) +
                 ") must be at most " + std::to_string(kMaxComputations)};
  }
  return Status::Ok();
}

Status CheckDurationTableEntries(int64_t entries, double unit_time_s) {
  if (entries > kMaxDurationTableEntries) {
    const double factor = static_cast<double>(entries) / static_cast<double>(kMaxDurationTableEntries);
    return Error{"unit_time_s " + Text(unit_time_s) + " s is too fine for this profile: its cost tables would have " +
                 std::to_string(entries) + " entries, more than the limit of " +
                 std::to_string(kMaxDurationTableEntries) + "; use a unit time of " +
                 Text(CoarserUnitTime(unit_time_s, factor)) + " s or coarser"};
  }
  return Status::Ok();
}

Status CheckFrontierSize(double slowest_units, double fastest_units, int64_t computations, double unit_time_s,
                         double shortest_time_s) {
  if (!(slowest_units <= static_cast<double>(kMaxIterationUnits))) {
    return Error{"unit_time_s " + Text(unit_time_s) + " s is too fine for this pipeline: its slowest iteration is " +
                 Text(slowest_units) +
                 " unit times, more than the 2^53 an iteration may have; use a coarser unit time"};
  }
  const double points = slowest_units - fastest_units + 1;
  const double work = points * static_cast<double>(computations);
  if (points > static_cast<double>(kMaxFrontierPoints) || work > kMaxFrontierWork) {
    const double factor = std::max(points / static_cast<double>(kMaxFrontierPoints), work / kMaxFrontierWork);
    const double coarser_s = CoarserUnitTime(unit_time_s, factor);
    const std::string what_to_do =
        coarser_s <= shortest_time_s
            ? "use a unit time of about " + Text(coarser_s) + " s or coarser, or fewer microbatches"
            : "use fewer microbatches (a unit time coarse enough, about " + Text(coarser_s) +
                  " s, is longer than the fastest computation, " + Text(shortest_time_s) + " s)";
    return Error{"the frontier would have up to " + Text(points) + " points (one per unit time of " +
                 Text(unit_time_s) + " s between the slowest and the fastest iteration) over " +
                 std::to_string(computations) + " computations; the limits are " + std::to_string(kMaxFrontierPoints) +
                 " points and points x computations <= " + Text(kMaxFrontierWork) + ": " + what_to_do};
  }
  return Status::Ok();
}

Status CheckIterationEnergy(double energy_bound_j) {
  if (!(energy_bound_j <= kMaxIterationEnergyJ)) {
    return Error{"the profile's energies are too large to plan with: an iteration could add up to " +
                 Text(energy_bound_j) + " J, more than " + Text(kMaxIterationEnergyJ) + " J"};
  }
  return Status::Ok();
}

}  // namespace wattcut
