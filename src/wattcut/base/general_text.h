// A number as text in printf's %g style: the one for every CSV cell that holds a measured
// or computed double (a reader gets back exactly the double that was written; an integer
// cell is std::to_string), and for messages that quote values ("0.0005", "5e-05",
// "1e+308", "inf"). FixedDecimals (fixed_decimals.h) is for tables and reports meant for
// people.
#pragma once

#include <string>

namespace wattcut {

// The shortest %g-style text that reads back as the same double: GeneralText(0.0005) ==
// "0.0005", GeneralText(5e-05) == "5e-05".
std::string GeneralText(double value);
// %g-style with `significant_digits` digits: GeneralText(1.0 / 3, 6) == "0.333333".
std::string GeneralText(double value, int significant_digits);

}  // namespace wattcut
