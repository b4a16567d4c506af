#include "wattcut/cli/duration_argument.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::cli {

using polca::CheckDuration;

Result<double> ParseDuration(const std::string& text) {
  const std::string expected =
      "--duration: expected a number with a unit, d (days), h (hours), m (minutes) or s "
      "(seconds), like 7d, 12h, 30m or 45s, got '" +
      PrintableText(text) + "'";
  if (text.empty()) return Error{expected};
  double unit = 1;
  std::string t = text;
  switch (t.back()) {
    case 'd':
      unit = 86400;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'm':
      unit = 60;
      break;
    case 's':
      unit = 1;
      break;
    default:
      return Error{expected};
  }
  t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t.front())) || t.front() == '.') ||
      end != t.c_str() + t.size() || !std::isfinite(v)) {
    return Error{expected};
  }
  if (Status s = CheckDuration(v * unit); !s.ok()) return Error{"--duration: " + s.error().message};
  return v * unit;
}

}  // namespace wattcut::cli
