#include "wattcut/slurm/wattcut_mode.h"

#include <charconv>
#include <cmath>

#include "wattcut/base/general_text.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::slurm {

namespace {

constexpr std::string_view kForms =
    "expected off, fastest, least-energy or power:WATTS (watts per GPU, e.g. power:300)";

}  // namespace

std::string WattcutMode::Text() const {
  switch (kind) {
    case Kind::kOff:
      return "off";
    case Kind::kFastest:
      return "fastest";
    case Kind::kLeastEnergy:
      return "least-energy";
    case Kind::kPower:
      return "power:" + GeneralText(power_per_gpu_w);
  }
  return "fastest";
}

Result<WattcutMode> ParseWattcutMode(std::string_view text) {
  const std::string given = "--wattcut=" + PrintableText(std::string(text), 64);
  if (text == "off") return WattcutMode{WattcutMode::Kind::kOff, 0};
  if (text == "fastest") return WattcutMode{WattcutMode::Kind::kFastest, 0};
  if (text == "least-energy") return WattcutMode{WattcutMode::Kind::kLeastEnergy, 0};
  constexpr std::string_view kPower = "power:";
  if (text.substr(0, kPower.size()) != kPower) return Error{given + ": " + std::string(kForms)};
  const std::string_view number = text.substr(kPower.size());
  double watts = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), watts);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(watts)) {
    return Error{given + ": the power is not a number; " + std::string(kForms)};
  }
  if (watts <= 0 || watts > kMaxPowerPerGpuW) {
    return Error{given + ": the power must be in (0, " + GeneralText(kMaxPowerPerGpuW) + "] watts per GPU"};
  }
  return WattcutMode{WattcutMode::Kind::kPower, watts};
}

}  // namespace wattcut::slurm
