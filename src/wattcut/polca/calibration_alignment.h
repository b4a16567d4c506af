// Whether a server's power and its load line up in time as read, or better at another shift of the
// power's clock: nvidia-smi writes local time, and a wrong --utc-offset (or none) moves every
// reading by whole hours or half hours, so that the fit pairs power with another moment's load
// (or nothing overlaps at all).
//
// A GPU's power follows the engine's work: the correlation of the power's 1 s means with the
// requests the engine holds each second (running and waiting, and one more where it worked since
// the scrape before) is high where the two line up and near zero where they do not. It is measured at every shift of
// the power's times by a whole quarter hour within +-14 h (every UTC offset in use), over the seconds both cover; a
// shift with under kMinOverlapS of them is not judged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "wattcut/telemetry/gpu_power_telemetry.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::polca {

constexpr double kMinOverlapS = 30;

struct PowerLoadAlignment {
  std::optional<double> as_read;  // the correlation without a shift; nullopt: too little overlap
  double best_shift_s = 0;        // added to the power's times
  double best = 0;                // the correlation there
  // The best shift lines them up clearly better than none: where the files overlap as read, it is
  // 0.3 higher and at least 0.5; where they do not, at least 0.3.
  bool better_elsewhere() const;
  // "the power and the load line up best with the power's times moved 7 h later (correlation 0.84;
  // as read: none overlap): did you mean --utc-offset -07:00?", given the offset that was used
  // (seconds east of UTC; nullopt when a zone name was given).
  std::string Advice(std::optional<int> offset_used_s) const;
};

// nullopt when no shift has kMinOverlapS seconds with both, or neither varies.
std::optional<PowerLoadAlignment> MeasureAlignment(const std::vector<telemetry::GpuPowerSeries>& gpus,
                                                   const telemetry::ServingLoadSeries& load);

}  // namespace wattcut::polca
