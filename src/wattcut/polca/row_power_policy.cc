#include "wattcut/polca/row_power_policy.h"

#include <algorithm>
#include <limits>

#include "wattcut/base/printable_text.h"

namespace wattcut::polca {

std::string PolicyName(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kNone:
      return "none";
    case PolicyKind::kBrakeOnly:
      return "brake-only";
    case PolicyKind::kPolca:
      return "polca";
    case PolicyKind::kUniformCap:
      return "uniform-cap";
    case PolicyKind::kPowerCap:
      return "power-cap";
    case PolicyKind::kHeadroom:
      return "headroom";
  }
  return "?";
}

Result<PolicyKind> ParsePolicyKind(const std::string& name) {
  for (PolicyKind k : {PolicyKind::kNone, PolicyKind::kBrakeOnly, PolicyKind::kPolca, PolicyKind::kUniformCap,
                       PolicyKind::kPowerCap, PolicyKind::kHeadroom}) {
    if (PolicyName(k) == name) return k;
  }
  return Error{"unknown policy '" + PrintableText(name) +
               "' (expected polca, headroom, brake-only, uniform-cap, power-cap or none)"};
}

std::string LevelName(PolicyLevel level) {
  switch (level) {
    case PolicyLevel::kNormal:
      return "normal";
    case PolicyLevel::kT1:
      return "t1";
    case PolicyLevel::kT2Low:
      return "t2-low";
    case PolicyLevel::kT2High:
      return "t2-high";
  }
  return "?";
}

std::string TargetName(ControlCommand::Target target) {
  switch (target) {
    case ControlCommand::Target::kLowPriority:
      return "low";
    case ControlCommand::Target::kHighPriority:
      return "high";
    case ControlCommand::Target::kBrake:
      return "brake";
  }
  return "?";
}

RowPowerPolicy::RowPowerPolicy(PolicyKind kind, const PolicySpec& policy, const ControlSpec& control)
    : kind_(kind),
      policy_(policy),
      control_(control),
      forecast_(policy.headroom_window_s),
      record_(control.actuation_latency_s, policy.headroom_window_s) {
  ceilings_.fill(std::numeric_limits<double>::infinity());
}

ClassSetting RowPowerPolicy::SettingFor(PolicyLevel level, Priority priority) const {
  ClassSetting s;
  switch (kind_) {
    case PolicyKind::kNone:
    case PolicyKind::kBrakeOnly:
      break;
    case PolicyKind::kHeadroom:  // POLCA's ladder but for its own middle level
      if (level == PolicyLevel::kT2Low) {
        s.lock_mhz = priority == Priority::kLow ? policy_.headroom_mid_low_mhz : policy_.headroom_mid_high_mhz;
        break;
      }
      [[fallthrough]];
    case PolicyKind::kPolca:
      if (priority == Priority::kLow) {
        if (level == PolicyLevel::kT1) s.lock_mhz = policy_.t1_low_mhz;
        if (level >= PolicyLevel::kT2Low) s.lock_mhz = policy_.t2_low_mhz;
      } else if (level == PolicyLevel::kT2High) {
        s.lock_mhz = policy_.t2_high_mhz;
      }
      break;
    case PolicyKind::kUniformCap:
      if (level == PolicyLevel::kT1) s.lock_mhz = policy_.t1_low_mhz;
      if (level >= PolicyLevel::kT2Low) s.lock_mhz = policy_.t2_low_mhz;
      break;
    case PolicyKind::kPowerCap:
      if (level == PolicyLevel::kT1) s.cap_w = policy_.cap_t1_w;
      if (level >= PolicyLevel::kT2Low) s.cap_w = policy_.cap_t2_w;
      break;
  }
  return s;
}

void RowPowerPolicy::Resume(PolicyLevel level, bool brake, double now_s) {
  level_ = kind_ == PolicyKind::kNone || kind_ == PolicyKind::kBrakeOnly ? PolicyLevel::kNormal : level;
  brake_ = kind_ != PolicyKind::kNone && brake;
  low_ = SettingFor(level_, Priority::kLow);
  high_ = SettingFor(level_, Priority::kHigh);
  t2_low_effective_at_s_ = now_s;
  level_effective_at_s_ = now_s;
  forecast_.Clear();
  record_.Clear();
  correction_ = 0;
  young_trend_share_ = 1;
}

PolicyLevel RowPowerPolicy::NextThresholdLevel(const PowerReading& reading, bool fresh, double now_s) {
  const double p = reading.power_fraction;
  PolicyLevel next = level_;
  if (p > policy_.t2) {
    if (level_ < PolicyLevel::kT2Low) {
      next = PolicyLevel::kT2Low;
    } else if (level_ == PolicyLevel::kT2Low && kind_ == PolicyKind::kPolca &&
               reading.measured_at_s >= t2_low_effective_at_s_) {
      next = PolicyLevel::kT2High;
    }
  } else if (p > policy_.t1) {
    if (level_ < PolicyLevel::kT1) next = PolicyLevel::kT1;
  }
  if (fresh) {
    if (level_ >= PolicyLevel::kT2Low && p < policy_.t2_release) {
      next = p < policy_.t1_release ? PolicyLevel::kNormal : PolicyLevel::kT1;
    } else if (level_ == PolicyLevel::kT1 && p < policy_.t1_release) {
      next = PolicyLevel::kNormal;
    }
  }
  if (next == PolicyLevel::kT2Low && level_ != PolicyLevel::kT2Low && level_ != PolicyLevel::kT2High) {
    t2_low_effective_at_s_ = now_s + control_.actuation_latency_s;
  }
  return next;
}

PolicyLevel RowPowerPolicy::NextHeadroomLevel(const PowerReading& reading, bool fresh, double now_s) {
  // A reading measured after the level in effect landed shows what that level does; one taken
  // under the brake, or before its release landed, describes the brake, not the level.
  const bool under_level = reading.measured_at_s >= level_effective_at_s_;
  const bool describes_level = under_level && !brake_ && reading.measured_at_s >= brake_released_at_s_;
  const int level = static_cast<int>(level_);
  const double ceiling = ceilings_[static_cast<size_t>(level)];
  if (describes_level) {
    forecast_.Add(reading.measured_at_s, reading.power_fraction);
    record_.AddReading(reading.measured_at_s, reading.power_fraction, ceiling);
  }
  // The record acts only where its forecasts have over-predicted this row, clearly: by more than
  // the deadband at the median of the last hour.
  auto over_predicted = [&](const std::optional<double>& median_error) {
    return median_error && *median_error < -policy_.headroom_correction_deadband;
  };
  const PowerForecast::Peak peak = forecast_.PeakPartsAt(now_s + control_.actuation_latency_s);
  // A young window's line rests on a few readings; it carries as much of its trend as young
  // windows' trends have come true on this row in the last hour.
  const bool young = record_.IsYoung(forecast_.span_s());
  const std::optional<double> share =
      young && over_predicted(record_.YoungMedianError()) ? record_.YoungTrendShare() : std::nullopt;
  young_trend_share_ = share ? *share : 1.0;
  const double forecast = share ? peak.base + *share * peak.trend : peak.value;
  // A forecast that has over-predicted this row for the last hour is lowered by as much.
  const std::optional<double> median_error = record_.MedianError();
  correction_ = over_predicted(median_error) ? *median_error : 0.0;
  if (describes_level && young) {
    record_.AddYoungForecast(reading.measured_at_s, peak.base, peak.trend, ceiling);
  } else if (describes_level) {
    record_.AddForecast(reading.measured_at_s, forecast, forecast_.span_s(), ceiling);
  }
  // The correction never expects less than the row has read within the forecast's window.
  const double floor = correction_ < 0 ? forecast_.Highest() : 0.0;
  const double expected = std::max({reading.power_fraction, forecast + correction_, floor});
  // A level at which the row cannot reach the brake needs nothing deeper; the level below such a
  // level is enough.
  const bool can_brake = ceiling > policy_.brake;
  const bool below_can_brake = level > 0 && ceilings_[static_cast<size_t>(level - 1)] > policy_.brake;
  PolicyLevel next = level_;
  if (can_brake && expected > policy_.headroom_guard) {
    if (under_level && level_ < PolicyLevel::kT2High) next = static_cast<PolicyLevel>(level + 1);
  } else if (fresh && describes_level && level_ > PolicyLevel::kNormal &&
             (!below_can_brake || expected < policy_.headroom_release) &&
             reading.measured_at_s - std::max(level_effective_at_s_, brake_released_at_s_) >=
                 policy_.headroom_window_s) {
    next = static_cast<PolicyLevel>(level - 1);
  }
  if (next != level_) {
    level_effective_at_s_ = now_s + control_.actuation_latency_s;
    forecast_.Clear();
  }
  return next;
}

std::vector<ControlCommand> RowPowerPolicy::Decide(const PowerReading& reading, double now_s) {
  std::vector<ControlCommand> commands;
  if (kind_ == PolicyKind::kNone) return commands;
  const double p = reading.power_fraction;
  const bool fresh = reading.complete && now_s - reading.measured_at_s <= control_.max_reading_age_s;

  // The brake comes first and is independent of the threshold levels.
  if (!brake_ && p > policy_.brake) {
    brake_ = true;
    ++brake_engagements_;
    forecast_.Clear();
    commands.push_back({ControlCommand::Target::kBrake, now_s, now_s + control_.brake_latency_s, {}, true});
  } else if (brake_ && fresh && p < policy_.brake_release) {
    brake_ = false;
    brake_released_at_s_ = now_s + control_.brake_latency_s;
    commands.push_back({ControlCommand::Target::kBrake, now_s, now_s + control_.brake_latency_s, {}, false});
  }

  if (kind_ != PolicyKind::kBrakeOnly) {
    level_ = kind_ == PolicyKind::kHeadroom ? NextHeadroomLevel(reading, fresh, now_s)
                                            : NextThresholdLevel(reading, fresh, now_s);
    ClassSetting low = SettingFor(level_, Priority::kLow);
    ClassSetting high = SettingFor(level_, Priority::kHigh);
    const double effective = now_s + control_.actuation_latency_s;
    // Both classes' commands carry the same effective time, so the priority order
    // that holds between requested settings also holds between settings in effect.
    auto push = [&](ControlCommand::Target target, const ClassSetting& s) {
      commands.push_back({target, now_s, effective, s, false});
    };
    if (!(low == low_)) push(ControlCommand::Target::kLowPriority, low);
    if (!(high == high_)) push(ControlCommand::Target::kHighPriority, high);
    low_ = low;
    high_ = high;
  }
  return commands;
}

}  // namespace wattcut::polca
