// What a Slurm job asks of wattcut: `--wattcut=off|fastest|least-energy|power:WATTS`, as sbatch,
// srun and salloc take it (spank_plugin.cc) and as the plugin's config gives its default.
#pragma once

#include <string>
#include <string_view>

#include "wattcut/base/result.h"

namespace wattcut::slurm {

struct WattcutMode {
  enum class Kind { kOff, kFastest, kLeastEnergy, kPower };
  Kind kind = Kind::kFastest;
  double power_per_gpu_w = 0;  // kPower: the job's power target per GPU (W)

  // "off", "fastest", "least-energy", "power:300" (as parsed, in its shortest form).
  std::string Text() const;
  bool operator==(const WattcutMode&) const = default;
};

// The largest power target per GPU a job may ask for: no GPU draws 10 kW.
inline constexpr double kMaxPowerPerGpuW = 10000;

// `text` as a mode; the error says what was given and every form that is accepted.
Result<WattcutMode> ParseWattcutMode(std::string_view text);

}  // namespace wattcut::slurm
