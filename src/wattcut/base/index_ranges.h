// A set of indices (GPUs, CPUs) written as people and Slurm write them: "0-3", "0,2,5-7".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut {

// `indices` sorted ascending, each once; "none" when empty.
std::string IndexRangesText(const std::vector<int>& indices);

// The indices of such a text ("" is none), in its order; kInvalidArgument naming `what` and the
// text for anything else, or an index above `max_index`.
Result<std::vector<int>> ParseIndexRanges(std::string_view text, int max_index, const std::string& what);

}  // namespace wattcut
