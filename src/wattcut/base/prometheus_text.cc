#include "wattcut/base/prometheus_text.h"

#include <cmath>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"

namespace wattcut {

namespace {

// The longest label value kept: an error message or a job id, not a document.
constexpr size_t kMaxLabelValueChars = 256;

}  // namespace

std::string PrometheusValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return GeneralText(value);
}

std::string PrometheusLabelValue(const std::string& value) {
  const std::string printable = PrintableText(value, kMaxLabelValueChars);
  std::string out;
  out.reserve(printable.size());
  for (char c : printable) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace wattcut
