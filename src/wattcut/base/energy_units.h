// Energy in the unit people bill and budget it in: 1 kWh = 1,000 W x 3,600 s.
#pragma once

namespace wattcut {

inline constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace wattcut
