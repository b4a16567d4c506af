// What is in effect on the row's GPUs at a given time: commands from the policy land at
// their effective time (actuation and brake latencies), in the order they take effect
// (ties in the order sent). The brake takes precedence over every lock or cap.
#pragma once

#include <deque>

#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/row_power_policy.h"

namespace wattcut::polca {

// The limits one GPU class runs under right now.
struct GpuLimits {
  double freq_mhz = 0;  // the clock (max clock when unlocked; brake clock when braked)
  double cap_w = 0;     // per-GPU power cap, 0 for none
  bool operator==(const GpuLimits&) const = default;
};

class ControlActuation {
 public:
  ControlActuation(double max_freq_mhz, double brake_freq_mhz);

  // Queues a command; it applies when ApplyUntil passes its effective time.
  void Submit(const ControlCommand& command);
  // Time of the next pending change, or +infinity.
  double NextChangeAt() const;
  // Applies every command effective at or before t. Returns true if anything changed.
  bool ApplyUntil(double t_s);

  GpuLimits Limits(Priority priority) const;
  bool brake_active() const { return brake_; }

 private:
  double max_freq_mhz_;
  double brake_freq_mhz_;
  std::deque<ControlCommand> pending_;  // sorted by effective time, stable
  ClassSetting low_;
  ClassSetting high_;
  bool brake_ = false;
};

}  // namespace wattcut::polca
