// A decimal number as monitoring tools and config files write one ("85.59", "-3", "1.5e3"), read strictly: no
// leading or trailing space, no hex, no "inf" or "nan" (a reader that takes those, as Prometheus'
// "NaN" and "+Inf", names them itself), and a value beyond a double's range is refused.
#pragma once

#include <optional>
#include <string_view>

namespace wattcut {

// Whether text is such a number's text: [+-]digits[.digits][e[+-]digits], digits on at least one
// side of the point (its value may still be beyond a double's range).
bool IsDecimalText(std::string_view text);
// Its value; nullopt when it is not IsDecimalText or is beyond a double's range.
std::optional<double> ParseDecimal(std::string_view text);

}  // namespace wattcut
