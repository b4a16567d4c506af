#include "wattcut/polca/control_actuation.h"

#include <algorithm>
#include <limits>

namespace wattcut::polca {

ControlActuation::ControlActuation(double max_freq_mhz, double brake_freq_mhz)
    : max_freq_mhz_(max_freq_mhz), brake_freq_mhz_(brake_freq_mhz) {}

void ControlActuation::Submit(const ControlCommand& command) {
  auto at = std::upper_bound(pending_.begin(), pending_.end(), command.effective_at_s,
                             [](double t, const ControlCommand& c) { return t < c.effective_at_s; });
  pending_.insert(at, command);
}

double ControlActuation::NextChangeAt() const {
  return pending_.empty() ? std::numeric_limits<double>::infinity() : pending_.front().effective_at_s;
}

bool ControlActuation::ApplyUntil(double t_s) {
  bool changed = false;
  while (!pending_.empty() && pending_.front().effective_at_s <= t_s) {
    const ControlCommand& c = pending_.front();
    switch (c.target) {
      case ControlCommand::Target::kBrake:
        changed |= brake_ != c.brake_on;
        brake_ = c.brake_on;
        break;
      case ControlCommand::Target::kLowPriority:
        changed |= !(low_ == c.setting);
        low_ = c.setting;
        break;
      case ControlCommand::Target::kHighPriority:
        changed |= !(high_ == c.setting);
        high_ = c.setting;
        break;
    }
    pending_.pop_front();
  }
  return changed;
}

GpuLimits ControlActuation::Limits(Priority priority) const {
  if (brake_) return {brake_freq_mhz_, 0};
  const ClassSetting& s = priority == Priority::kLow ? low_ : high_;
  return {s.lock_mhz > 0 ? s.lock_mhz : max_freq_mhz_, s.cap_w};
}

}  // namespace wattcut::polca
