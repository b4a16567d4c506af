// The short notation of pipeline computations used in schedule figures and by
// `wattcut schedule`: F (forward), B (backward, or backward_input when the backward is
// split, the zero-bubble papers' B), W (backward_weight), then the microbatch, then ".C"
// for a device's chunk C > 0 (interleaved): "F3", "B0.1", "W2".
#pragma once

#include <string>
#include <vector>

#include "wattcut/dag/pipeline_schedule.h"

namespace wattcut {

std::string ComputationNotation(const Computation& computation);
// A device's order: the notations separated by spaces.
std::string DeviceOrderNotation(const std::vector<Computation>& order);

}  // namespace wattcut
