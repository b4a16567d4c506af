// A number as text with a fixed number of decimals ("%.*f"), for reports, tables and charts.
#pragma once

#include <string>

namespace wattcut {

// FixedDecimals(3.14159, 2) == "3.14"; FixedDecimals(2.5, 0) == "2" (round half to even, as printf).
// A value that rounds to zero has no sign: FixedDecimals(-0.0001, 2) == "0.00", not "-0.00".
std::string FixedDecimals(double value, int decimals);

}  // namespace wattcut
