#include "wattcut/base/fixed_decimals.h"

#include <cstdio>

namespace wattcut {

std::string FixedDecimals(double value, int decimals) {
  char buffer[64];
  const int length = std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  if (length >= 0 && static_cast<size_t>(length) < sizeof buffer) return buffer;
  std::string out(static_cast<size_t>(length > 0 ? length : 0) + 1, '\0');  // a huge value: no truncation
  std::snprintf(out.data(), out.size(), "%.*f", decimals, value);
  out.pop_back();
  return out;
}

}  // namespace wattcut
