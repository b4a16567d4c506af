// The row power policy: a small, pure, deterministic state machine. Each call to Decide
// gets the latest row power reading (a fraction of the row budget, measured some time
// ago) and the current time, and returns the commands to send, each stamped with when
// it takes effect (issue time + actuation or brake latency).
//
// POLCA (ASPLOS '24), on reading p:
//   p > brake (100 %)  -> power brake on every GPU (released below brake_release)
//   p > T2 (89 %)      -> lock LOW priority to t2_low_mhz; if a reading taken after that
//                         lock took effect is still above T2, lock HIGH to t2_high_mhz
//   p > T1 (80 %)      -> lock LOW priority to t1_low_mhz
//   release with hysteresis: T2 actions below t2_release, T1 action below t1_release.
// Baselines with the same thresholds and latencies: brake-only (no locks), uniform-cap
// (every GPU locked alike regardless of priority: t1_low_mhz above T1, t2_low_mhz
// above T2), power-cap (reactive per-GPU power caps cap_t1_w / cap_t2_w for all), and
// none (no control at all, not even the brake: the unconstrained reference).
//
// headroom (wattcut's own, docs/polca.md "The headroom policy"): the same brake at the same
// thresholds, and four levels entered by forecast instead of by threshold. On each
// reading it asks what the row will read when a command sent now lands (PowerForecast over the
// readings taken under the level in effect, at now + actuation latency) and
//   forecast > headroom_guard  -> one level up, once a reading measured after the last change
//                                 landed shows it was not enough
//   forecast < headroom_release for a whole headroom_window_s under the level, on fresh complete
//                                 readings -> one level down
// Readings taken under the brake (or before its release landed) describe the brake, not the
// level: they are left out of the forecast, and the release waits a whole window after it.
// The forecast keeps its own record (ForecastRecord, forecast_record.h): how high the row read in
// the window after each forecast's landing. Where the median error of the last hour is below
// -headroom_correction_deadband (the forecast over-predicted this row by more than that), the
// forecast is lowered by that median, but never below the highest reading of its window (so a
// corrected forecast releases a level only once a whole window reads below the release); the brake
// and the ceilings are untouched by it. A young window (spanning under half its length, just after
// a level landed) fits its line to a few readings, and the record checks its forecasts apart:
// where their median error of the last hour is below -headroom_correction_deadband, a young
// window carries only the share of its trend that young windows' trends have come true on this
// row (their median, within 0 to 1), its readings and their rises in full.
// Its levels: t1 locks low priority to t1_low_mhz (POLCA's T1); t2-low, its middle level, locks
// low priority to headroom_mid_low_mhz and high priority lightly to headroom_mid_high_mhz (both
// classes' SLO budgets spent alike, where POLCA's second step spends only low priority's); t2-high
// is POLCA's deepest (t2_low_mhz, t2_high_mhz). So it locks only while the row is near its brake.
// How deep it goes is bounded by what the row can draw (SetLevelCeilings, row_ceiling.h): it never
// escalates from a level at which every server at its provisioned peak stays within the brake,
// releases a level whose level below is such a level, and so locks nothing at all in a row that
// cannot reach its brake unlocked (the provisioned size: servers x provisioned peak = budget).
//
// Stale telemetry: a reading older than max_reading_age_s, or one that is not complete, may still
// tighten control (escalate, brake) but never loosens it: no release on old or partial data.
// Invariant: the low-priority class is never less constrained than the high one.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/polca/arrival_source.h"
#include "wattcut/polca/forecast_record.h"
#include "wattcut/polca/polca_config.h"
#include "wattcut/polca/power_forecast.h"

namespace wattcut::polca {

enum class PolicyKind { kNone, kBrakeOnly, kPolca, kUniformCap, kPowerCap, kHeadroom };

// "none", "brake-only", "polca", "uniform-cap", "power-cap", "headroom".
std::string PolicyName(PolicyKind kind);
Result<PolicyKind> ParsePolicyKind(const std::string& name);

// The escalation level of the thresholds (the brake is tracked beside it).
enum class PolicyLevel { kNormal = 0, kT1 = 1, kT2Low = 2, kT2High = 3 };
std::string LevelName(PolicyLevel level);

// What one priority class of GPUs is told to run at. 0 means "not limited".
struct ClassSetting {
  double lock_mhz = 0;
  double cap_w = 0;
  bool operator==(const ClassSetting&) const = default;
};

struct PowerReading {
  double measured_at_s = 0;   // end of the averaging window the value describes
  double power_fraction = 0;  // row power / row budget
  // False when some server's own reading is missing from it (the live controller counts such a
  // server at an older value): like a stale reading, it may tighten control, never loosen it.
  bool complete = true;
};

struct ControlCommand {
  enum class Target { kLowPriority, kHighPriority, kBrake };
  Target target = Target::kLowPriority;
  double issued_at_s = 0;
  double effective_at_s = 0;
  ClassSetting setting;   // for the priority targets
  bool brake_on = false;  // for kBrake
};

// "low", "high", "brake": for logs and CSV files.
std::string TargetName(ControlCommand::Target target);

class RowPowerPolicy {
 public:
  RowPowerPolicy(PolicyKind kind, const PolicySpec& policy, const ControlSpec& control);

  // Starts from a state already in force on the row instead of from normal: what a restarted
  // live controller reads back from the agents' ceilings. The settings of `level` count as
  // commanded and in effect since `now_s` (so T2's escalation to high priority needs a reading
  // measured after it, as after a lock sent now).
  void Resume(PolicyLevel level, bool brake, double now_s);

  // The most the row can read at each level (indexed by PolicyLevel; row_ceiling.h): the headroom
  // policy goes no deeper than the first level at which the row cannot reach the brake, and does
  // nothing where it cannot reach it unlocked. Unset: every level can reach it.
  void SetLevelCeilings(const std::array<double, 4>& ceilings) { ceilings_ = ceilings; }

  // One decision. `now_s` must not decrease between calls; readings may be stale.
  std::vector<ControlCommand> Decide(const PowerReading& reading, double now_s);

  PolicyKind kind() const { return kind_; }
  // What `level` tells a class to run at under this policy.
  ClassSetting SettingFor(PolicyLevel level, Priority priority) const;
  PolicyLevel level() const { return level_; }
  bool brake_requested() const { return brake_; }
  // The setting last commanded for a class (not necessarily in effect yet).
  const ClassSetting& requested(Priority priority) const { return priority == Priority::kLow ? low_ : high_; }
  int brake_engagements() const { return brake_engagements_; }
  // Headroom: what the last decision added to its forecast from the forecast's record (0, or the
  // record's median error of the last hour where that is below -headroom_correction_deadband).
  double forecast_correction() const { return correction_; }
  // Headroom: the share of a young window's trend the last decision's forecast carried (1: all of
  // it, as when the window was not young or the record had not found young forecasts over-predicting).
  double young_trend_share() const { return young_trend_share_; }

 private:
  // The level the next reading asks for: POLCA's thresholds (and the baselines'), or the
  // headroom policy's forecast. `fresh`: recent and complete, so it may release.
  PolicyLevel NextThresholdLevel(const PowerReading& reading, bool fresh, double now_s);
  PolicyLevel NextHeadroomLevel(const PowerReading& reading, bool fresh, double now_s);

  PolicyKind kind_;
  PolicySpec policy_;
  ControlSpec control_;
  PolicyLevel level_ = PolicyLevel::kNormal;
  bool brake_ = false;
  int brake_engagements_ = 0;
  ClassSetting low_;
  ClassSetting high_;
  // When the current T2 low-priority action takes effect; escalation to high
  // priority waits for a reading measured after it.
  double t2_low_effective_at_s_ = 0;
  // Headroom: when the level in effect was commanded to land, when the last brake release
  // landed, and the readings since both.
  double level_effective_at_s_ = 0;
  double brake_released_at_s_ = 0;
  PowerForecast forecast_;
  ForecastRecord record_;
  double correction_ = 0;
  double young_trend_share_ = 1;
  std::array<double, 4> ceilings_;
};

}  // namespace wattcut::polca
