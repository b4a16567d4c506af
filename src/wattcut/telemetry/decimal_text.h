// A decimal number as monitoring tools print one ("85.59", "-3", "1.5e3"), read strictly: no
// leading or trailing space, no hex, no "inf" or "nan" (a reader that takes those, as Prometheus'
// "NaN" and "+Inf", names them itself), and a value beyond a double's range is refused.
#pragma once

#include <optional>
#include <string_view>

namespace wattcut::telemetry {

std::optional<double> ParseDecimal(std::string_view text);

}  // namespace wattcut::telemetry
