// `--duration` as the polca commands take it: a number with a unit (d, h, m or s), within the
// simulator's bounds (polca/row_limits.h).
#pragma once

#include <string>

#include "wattcut/base/result.h"

namespace wattcut::cli {

// "7d", "36h", "90m", "600s", "1.5h"; a unit is required ("7" could be days or seconds).
Result<double> ParseDuration(const std::string& text);

}  // namespace wattcut::cli
