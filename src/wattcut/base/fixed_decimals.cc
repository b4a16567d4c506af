#include "wattcut/base/fixed_decimals.h"

#include <cstdio>
#include <utility>

namespace wattcut {

namespace {

// "-0.00" -> "0.00": a value that rounds to zero has no sign to show ("energy -0.00 % below").
std::string WithoutNegativeZero(std::string text) {
  if (text.empty() || text[0] != '-') return text;
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] != '0' && text[i] != '.') return text;
  }
  return text.substr(1);
}

}  // namespace

std::string FixedDecimals(double value, int decimals) {
  char buffer[64];
  const int length = std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  if (length >= 0 && static_cast<size_t>(length) < sizeof buffer) return WithoutNegativeZero(buffer);
  std::string out(static_cast<size_t>(length > 0 ? length : 0) + 1, '\0');  // a huge value: no truncation
  std::snprintf(out.data(), out.size(), "%.*f", decimals, value);
  out.pop_back();
  return WithoutNegativeZero(std::move(out));
}

}  // namespace wattcut
