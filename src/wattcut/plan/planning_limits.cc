#include "wattcut/plan/planning_limits.h"

#include <string>

namespace wattcut {

Status CheckPipelineShape(int num_stages, int num_microbatches) {
  if (num_stages < 1 || num_stages > kMaxStages) {
    return Error{"pipeline stages must be in [1, " + std::to_string(kMaxStages) + "], got " +
                 std::to_string(num_stages)};
  }
  if (num_microbatches < 1 || num_microbatches > kMaxMicrobatches) {
    return Error{"microbatches must be in [1, " + std::to_string(kMaxMicrobatches) + "], got " +
                 std::to_string(num_microbatches)};
  }
  const int64_t computations = int64_t{2} * num_stages * num_microbatches;
  if (computations > kMaxComputations) {
    return Error{"computations per iteration (2 x " + std::to_string(num_stages) + " stages x " +
                 std::to_string(num_microbatches) + " microbatches = " + std::to_string(computations) +
                 ") must be at most " + std::to_string(kMaxComputations)};
  }
  return Status::Ok();
}

Status CheckDurationTableEntries(int64_t entries, double unit_time_s) {
  if (entries > kMaxDurationTableEntries) {
    return Error{"the cost tables would have " + std::to_string(entries) + " entries at unit_time_s " +
                 std::to_string(unit_time_s) + " s, over the limit of " + std::to_string(kMaxDurationTableEntries) +
                 ": use a coarser unit time"};
  }
  return Status::Ok();
}

}  // namespace wattcut
