// A number as text with a fixed number of decimals ("%.*f"), for reports, tables and charts.
#pragma once

#include <string>

namespace wattcut {

// FixedDecimals(3.14159, 2) == "3.14"; FixedDecimals(2.5, 0) == "2" (round half to even, as printf).
std::string FixedDecimals(double value, int decimals);

}  // namespace wattcut
