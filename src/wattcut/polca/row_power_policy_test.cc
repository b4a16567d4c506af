#include "wattcut/polca/row_power_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "wattcut/polca/control_actuation.h"
#include "wattcut/polca/random.h"

namespace wattcut::polca {
namespace {

using Target = ControlCommand::Target;

PolicySpec Spec() { return PolicySpec{}; }  // POLCA.md defaults: 80/75, 89/84, 100 %

ControlSpec Control() {
  ControlSpec c;
  c.telemetry_delay_s = 2;
  c.actuation_latency_s = 40;
  c.brake_latency_s = 5;
  c.max_reading_age_s = 10;
  return c;
}

// A fresh reading taken 2 s before `now`.
std::vector<ControlCommand> At(RowPowerPolicy& policy, double now, double p) {
  return policy.Decide({now - 2, p}, now);
}

const ControlCommand* Find(const std::vector<ControlCommand>& commands, Target target) {
  for (const auto& c : commands) {
    if (c.target == target) return &c;
  }
  return nullptr;
}

TEST(RowPowerPolicy, ResumedFromARowInT2ItReleasesAndEscalatesAsIfItHadLockedItself) {
  RowPowerPolicy resumed(PolicyKind::kPolca, Spec(), Control());
  resumed.Resume(PolicyLevel::kT2Low, false, 100);
  EXPECT_EQ(resumed.level(), PolicyLevel::kT2Low);
  EXPECT_EQ(resumed.requested(Priority::kLow).lock_mhz, Spec().t2_low_mhz);
  // Still above T2 on a reading measured after the resume: high priority is locked next.
  auto escalate = At(resumed, 103, 0.95);
  ASSERT_NE(Find(escalate, Target::kHighPriority), nullptr);
  EXPECT_EQ(Find(escalate, Target::kHighPriority)->setting.lock_mhz, Spec().t2_high_mhz);
  EXPECT_EQ(Find(escalate, Target::kLowPriority), nullptr) << "low priority is already where it should be";
  // Below both releases: everything is released, as after its own lock.
  auto release = At(resumed, 110, 0.5);
  ASSERT_NE(Find(release, Target::kLowPriority), nullptr);
  EXPECT_EQ(Find(release, Target::kLowPriority)->setting.lock_mhz, 0);
  EXPECT_EQ(resumed.level(), PolicyLevel::kNormal);

  RowPowerPolicy braked(PolicyKind::kPolca, Spec(), Control());
  braked.Resume(PolicyLevel::kNormal, true, 0);
  EXPECT_TRUE(braked.brake_requested());
  auto off = At(braked, 5, 0.5);
  ASSERT_NE(Find(off, Target::kBrake), nullptr);
  EXPECT_FALSE(Find(off, Target::kBrake)->brake_on);
}

TEST(RowPowerPolicy, ThresholdCrossingsLockLowPriorityFirst) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  EXPECT_TRUE(At(policy, 10, 0.79).empty());
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);

  auto commands = At(policy, 11, 0.81);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].target, Target::kLowPriority);
  EXPECT_DOUBLE_EQ(commands[0].setting.lock_mhz, 1275);
  EXPECT_DOUBLE_EQ(commands[0].issued_at_s, 11);
  EXPECT_DOUBLE_EQ(commands[0].effective_at_s, 51);  // out-of-band actuation latency
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  EXPECT_TRUE(At(policy, 12, 0.85).empty());  // still T1: nothing new to send

  commands = At(policy, 13, 0.90);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].target, Target::kLowPriority);
  EXPECT_DOUBLE_EQ(commands[0].setting.lock_mhz, 1110);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  EXPECT_DOUBLE_EQ(policy.requested(Priority::kHigh).lock_mhz, 0);
}

TEST(RowPowerPolicy, HighPriorityIsLockedOnlyIfStillAboveT2AfterTheLowLockLands) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  At(policy, 100, 0.95);  // -> T2 low lock, effective at 140
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  // Readings measured before 140 cannot show the low lock's effect: no escalation.
  EXPECT_TRUE(At(policy, 120, 0.95).empty());
  EXPECT_TRUE(policy.Decide({139.5, 0.95}, 141.5).empty());
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  // The first reading measured after 140 still above T2 escalates.
  auto commands = policy.Decide({140, 0.93}, 142);
  const ControlCommand* high = Find(commands, Target::kHighPriority);
  ASSERT_NE(high, nullptr);
  EXPECT_DOUBLE_EQ(high->setting.lock_mhz, 1305);
  EXPECT_DOUBLE_EQ(high->effective_at_s, 182);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2High);

  RowPowerPolicy calm(PolicyKind::kPolca, Spec(), Control());
  At(calm, 100, 0.95);
  EXPECT_TRUE(calm.Decide({141, 0.88}, 143).empty());  // below T2 after the low lock: stays
  EXPECT_EQ(calm.level(), PolicyLevel::kT2Low);
}

TEST(RowPowerPolicy, ReleasesWithHysteresis) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  At(policy, 0, 0.95);
  policy.Decide({45, 0.95}, 47);
  ASSERT_EQ(policy.level(), PolicyLevel::kT2High);
  EXPECT_TRUE(At(policy, 60, 0.86).empty());  // between T2 release (84 %) and T2: hold
  auto commands = At(policy, 61, 0.83);       // below 84 %: back to the T1 action
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  ASSERT_NE(Find(commands, Target::kLowPriority), nullptr);
  EXPECT_DOUBLE_EQ(Find(commands, Target::kLowPriority)->setting.lock_mhz, 1275);
  ASSERT_NE(Find(commands, Target::kHighPriority), nullptr);
  EXPECT_DOUBLE_EQ(Find(commands, Target::kHighPriority)->setting.lock_mhz, 0);
  EXPECT_TRUE(At(policy, 62, 0.76).empty());  // between T1 release (75 %) and T1: hold
  commands = At(policy, 63, 0.74);
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_DOUBLE_EQ(commands[0].setting.lock_mhz, 0);
  // A drop from T2 straight below the T1 release releases everything at once.
  At(policy, 70, 0.92);
  At(policy, 71, 0.5);
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
  EXPECT_DOUBLE_EQ(policy.requested(Priority::kLow).lock_mhz, 0);
}

TEST(RowPowerPolicy, StaleTelemetryTightensButNeverReleases) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  At(policy, 0, 0.91);
  ASSERT_EQ(policy.level(), PolicyLevel::kT2Low);
  // Measured 30 s ago (older than max_reading_age_s = 10): no release.
  EXPECT_TRUE(policy.Decide({20, 0.40}, 50).empty());
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  // A stale high reading still escalates (it was measured after the low lock landed).
  policy.Decide({45, 0.95}, 70);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2High);
  // And a stale reading above the brake threshold still brakes.
  auto commands = policy.Decide({50, 1.02}, 80);
  ASSERT_NE(Find(commands, Target::kBrake), nullptr);
  EXPECT_TRUE(policy.brake_requested());
  EXPECT_TRUE(policy.Decide({51, 0.3}, 90).empty());  // stale: brake not released
  EXPECT_TRUE(policy.brake_requested());
  // Fresh again: everything releases.
  commands = At(policy, 100, 0.3);
  EXPECT_FALSE(policy.brake_requested());
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
}

TEST(RowPowerPolicy, AnIncompleteReadingTightensButNeverReleases) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  At(policy, 10, 0.85);
  ASSERT_EQ(policy.level(), PolicyLevel::kT1);
  EXPECT_TRUE(policy.Decide({10, 0.3, /*complete=*/false}, 11).empty()) << "low, but a server is missing: no release";
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  policy.Decide({12, 0.95, /*complete=*/false}, 12);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low) << "high, even partial: escalate";
  policy.Decide({13, 0.3, /*complete=*/true}, 13);
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
}

TEST(RowPowerPolicy, BrakeEngagesAboveBudgetOncePerEventAndTakesPrecedence) {
  RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
  auto commands = At(policy, 10, 1.01);
  const ControlCommand* brake = Find(commands, Target::kBrake);
  ASSERT_NE(brake, nullptr);
  EXPECT_TRUE(brake->brake_on);
  EXPECT_DOUBLE_EQ(brake->effective_at_s, 15);               // brake latency, not the 40 s path
  ASSERT_NE(Find(commands, Target::kLowPriority), nullptr);  // the T2 action goes too
  EXPECT_EQ(policy.brake_engagements(), 1);
  EXPECT_EQ(Find(At(policy, 11, 1.05), Target::kBrake), nullptr);  // same event
  EXPECT_EQ(policy.brake_engagements(), 1);
  EXPECT_EQ(Find(At(policy, 12, 0.95), Target::kBrake), nullptr);  // above brake_release
  commands = At(policy, 13, 0.85);
  ASSERT_NE(Find(commands, Target::kBrake), nullptr);
  EXPECT_FALSE(Find(commands, Target::kBrake)->brake_on);
  At(policy, 14, 1.2);
  EXPECT_EQ(policy.brake_engagements(), 2);

  ControlActuation actuation(1410, 288);
  for (const auto& c : At(policy, 20, 1.2)) actuation.Submit(c);
  ControlCommand lock{Target::kHighPriority, 0, 0, {1305, 0}, false};
  actuation.Submit(lock);
  actuation.ApplyUntil(0);
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kHigh).freq_mhz, 1305);
  ControlCommand on{Target::kBrake, 1, 5, {}, true};
  actuation.Submit(on);
  actuation.ApplyUntil(5);
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kHigh).freq_mhz, 288);
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kLow).freq_mhz, 288);
}

TEST(RowPowerPolicy, BaselinesActAsDocumented) {
  RowPowerPolicy none(PolicyKind::kNone, Spec(), Control());
  EXPECT_TRUE(At(none, 1, 2.0).empty());
  EXPECT_FALSE(none.brake_requested());

  RowPowerPolicy brake_only(PolicyKind::kBrakeOnly, Spec(), Control());
  EXPECT_TRUE(At(brake_only, 1, 0.95).empty());
  auto commands = At(brake_only, 2, 1.01);
  ASSERT_EQ(commands.size(), 1u);
  EXPECT_EQ(commands[0].target, Target::kBrake);

  RowPowerPolicy uniform(PolicyKind::kUniformCap, Spec(), Control());
  At(uniform, 1, 0.81);
  EXPECT_DOUBLE_EQ(uniform.requested(Priority::kLow).lock_mhz, 1275);
  EXPECT_DOUBLE_EQ(uniform.requested(Priority::kHigh).lock_mhz, 1275);
  At(uniform, 2, 0.95);
  uniform.Decide({100, 0.95}, 102);
  EXPECT_EQ(uniform.level(), PolicyLevel::kT2Low);  // no separate high-priority step
  EXPECT_DOUBLE_EQ(uniform.requested(Priority::kHigh).lock_mhz, 1110);

  RowPowerPolicy cap(PolicyKind::kPowerCap, Spec(), Control());
  At(cap, 1, 0.81);
  EXPECT_DOUBLE_EQ(cap.requested(Priority::kLow).cap_w, 350);
  EXPECT_DOUBLE_EQ(cap.requested(Priority::kHigh).cap_w, 350);
  At(cap, 2, 0.95);
  EXPECT_DOUBLE_EQ(cap.requested(Priority::kHigh).cap_w, 300);
  EXPECT_DOUBLE_EQ(cap.requested(Priority::kHigh).lock_mhz, 0);

  EXPECT_EQ(*ParsePolicyKind("uniform-cap"), PolicyKind::kUniformCap);
  EXPECT_NE(ParsePolicyKind("magic").error().message.find("unknown policy 'magic'"), std::string::npos);
  EXPECT_NE(ParsePolicyKind("\x1b[2J").error().message.find("unknown policy '\\x1b[2J'"), std::string::npos);
}

// A reading every second from `from` to `to` (inclusive), each delivered 2 s after it was
// measured, at the power `p(t)` gives; returns the commands of the whole stretch.
template <typename F>
std::vector<ControlCommand> Feed(RowPowerPolicy& policy, int from, int to, F p) {
  std::vector<ControlCommand> all;
  for (int t = from; t <= to; ++t) {
    for (const ControlCommand& c : policy.Decide({t - 2.0, p(t)}, t)) all.push_back(c);
  }
  return all;
}

TEST(RowPowerPolicyHeadroom, AFlatRowBelowItsGuardIsNeverLocked) {
  // 93 % for an hour: POLCA is at T2 (high priority locked); the headroom policy expects 93 % when
  // a command would land, below its 97 % guard, and does nothing.
  RowPowerPolicy headroom(PolicyKind::kHeadroom, Spec(), Control());
  EXPECT_TRUE(Feed(headroom, 2, 3600, [](int) { return 0.93; }).empty());
  EXPECT_EQ(headroom.level(), PolicyLevel::kNormal);
  RowPowerPolicy polca(PolicyKind::kPolca, Spec(), Control());
  Feed(polca, 2, 3600, [](int) { return 0.93; });
  EXPECT_EQ(polca.level(), PolicyLevel::kT2High);
}

TEST(RowPowerPolicyHeadroom, EscalatesOneLevelAtATimeOnceEachLockHasLanded) {
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  auto first = Feed(policy, 2, 2, [](int) { return 0.98; });
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].target, Target::kLowPriority);
  EXPECT_EQ(first[0].setting.lock_mhz, Spec().t1_low_mhz);
  EXPECT_DOUBLE_EQ(first[0].effective_at_s, 42);
  // Until a reading measured after 42 s arrives (at 44 s) nothing more happens.
  EXPECT_TRUE(Feed(policy, 3, 43, [](int) { return 0.98; }).empty());
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  // Its middle level locks both classes a little: low priority deeper than at t1, high priority
  // lightly (decode +3.7 % and +0.8 % on the A100).
  auto second = Feed(policy, 44, 44, [](int) { return 0.98; });
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(Find(second, Target::kLowPriority)->setting.lock_mhz, Spec().headroom_mid_low_mhz);
  EXPECT_EQ(Find(second, Target::kHighPriority)->setting.lock_mhz, Spec().headroom_mid_high_mhz);
  EXPECT_LT(Spec().headroom_mid_low_mhz, Spec().t1_low_mhz);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  // Then POLCA's deepest: low priority at t2_low_mhz, high priority at t2_high_mhz.
  auto third = Feed(policy, 45, 86, [](int) { return 0.98; });
  ASSERT_EQ(third.size(), 2u);
  EXPECT_EQ(Find(third, Target::kLowPriority)->setting.lock_mhz, Spec().t2_low_mhz);
  EXPECT_EQ(Find(third, Target::kHighPriority)->setting.lock_mhz, Spec().t2_high_mhz);
  EXPECT_EQ(policy.level(), PolicyLevel::kT2High);
  EXPECT_TRUE(Feed(policy, 87, 400, [](int) { return 0.98; }).empty()) << "the top level; only the brake is above";
  EXPECT_FALSE(policy.brake_requested());
}

TEST(RowPowerPolicyHeadroom, ARisingRowIsLockedBeforeItReachesTheGuard) {
  // +0.1 % of the budget a second: the lock has to be sent 42 s before the row reaches 97 %.
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  int locked_at = -1;
  for (int t = 2; t <= 200 && locked_at < 0; ++t) {
    if (!policy.Decide({t - 2.0, 0.80 + 0.001 * (t - 2)}, t).empty()) locked_at = t;
  }
  ASSERT_GT(locked_at, 0);
  const double reading_then = 0.80 + 0.001 * (locked_at - 2);
  EXPECT_LT(reading_then, 0.94) << "sent at " << locked_at << " s";
  EXPECT_GT(reading_then, 0.90) << "but not long before it is needed";
}

TEST(RowPowerPolicyHeadroom, ReleasesOneLevelAfterAWholeWindowBelowItsRelease) {
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.Resume(PolicyLevel::kT2Low, false, 0);
  // 89 %: below the 92 % release. The first reading counts from 0 s, the level's start.
  EXPECT_TRUE(Feed(policy, 2, 61, [](int) { return 0.89; }).empty()) << "less than a window";
  auto down = Feed(policy, 62, 62, [](int) { return 0.89; });
  ASSERT_EQ(down.size(), 2u);
  EXPECT_EQ(Find(down, Target::kLowPriority)->setting.lock_mhz, Spec().t1_low_mhz);
  EXPECT_EQ(Find(down, Target::kHighPriority)->setting.lock_mhz, 0) << "high priority unlocked at t1";
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  // The next step down waits for a whole window measured under T1, which lands at 102 s.
  EXPECT_TRUE(Feed(policy, 63, 163, [](int) { return 0.89; }).empty());
  EXPECT_EQ(Feed(policy, 164, 164, [](int) { return 0.89; }).size(), 1u);
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
  // Between release and guard it stays where it is.
  RowPowerPolicy held(PolicyKind::kHeadroom, Spec(), Control());
  held.Resume(PolicyLevel::kT1, false, 0);
  EXPECT_TRUE(Feed(held, 2, 1000, [](int) { return 0.95; }).empty());
  EXPECT_EQ(held.level(), PolicyLevel::kT1);
}

TEST(RowPowerPolicyHeadroom, StaleOrIncompleteReadingsEscalateButNeverRelease) {
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.Resume(PolicyLevel::kT1, false, 0);
  for (int t = 2; t <= 400; ++t) {
    EXPECT_TRUE(policy.Decide({t - 20.0, 0.5}, t).empty()) << "18 s old at " << t;
  }
  for (int t = 401; t <= 800; ++t) {
    EXPECT_TRUE(policy.Decide({t - 2.0, 0.5, false}, t).empty()) << "incomplete at " << t;
  }
  EXPECT_EQ(policy.level(), PolicyLevel::kT1);
  EXPECT_FALSE(policy.Decide({780, 0.99, false}, 801).empty()) << "but it escalates on them";
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
}

TEST(RowPowerPolicyHeadroom, ARowThatCannotReachItsBrakeIsNeverLocked) {
  // Every server at its provisioned peak is the budget (the provisioned size): readings that swing
  // from 70 to 99 % every few seconds, whose forecast is far above the guard, lock nothing.
  auto swinging = [](int t) { return t % 4 == 0 ? 0.99 : 0.70 + 0.02 * (t % 3); };
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.SetLevelCeilings({1.0, 0.97, 0.95, 0.93});
  EXPECT_TRUE(Feed(policy, 2, 3600, swinging).empty());
  EXPECT_EQ(policy.level(), PolicyLevel::kNormal);
  // The same readings with a ceiling above the brake: it locks, as it did before ceilings.
  RowPowerPolicy unbounded(PolicyKind::kHeadroom, Spec(), Control());
  unbounded.SetLevelCeilings({1.05, 1.02, 0.99, 0.96});
  EXPECT_FALSE(Feed(unbounded, 2, 3600, swinging).empty());
  EXPECT_NE(unbounded.level(), PolicyLevel::kNormal);
  // A reading above the brake still brakes: the brake does not trust a ceiling.
  EXPECT_FALSE(policy.Decide({3600, 1.01}, 3602).empty());
  EXPECT_TRUE(policy.brake_requested());
}

TEST(RowPowerPolicyHeadroom, ItGoesNoDeeperThanTheFirstLevelThatKeepsTheRowFromItsBrake) {
  // At t2-low the row cannot read above 99 %: 98 % readings, which took the policy to t2-high
  // without ceilings, stop it at t2-low; high priority is never locked to t2_high_mhz.
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.SetLevelCeilings({1.10, 1.04, 0.99, 0.95});
  auto commands = Feed(policy, 2, 2000, [](int) { return 0.98; });
  EXPECT_EQ(policy.level(), PolicyLevel::kT2Low);
  for (const ControlCommand& c : commands) {
    if (c.target == Target::kHighPriority) {
      EXPECT_NE(c.setting.lock_mhz, Spec().t2_high_mhz);
    }
  }
  // Resumed deeper than that (a restarted controller reading the agents' ceilings), it comes back
  // up to t2-low a level a window, although its readings stay above its release; t1 can reach the
  // brake, so it stays at t2-low.
  RowPowerPolicy resumed(PolicyKind::kHeadroom, Spec(), Control());
  resumed.SetLevelCeilings({1.10, 1.04, 0.99, 0.95});
  resumed.Resume(PolicyLevel::kT2High, false, 0);
  EXPECT_TRUE(Feed(resumed, 2, 61, [](int) { return 0.95; }).empty()) << "less than a window";
  EXPECT_FALSE(Feed(resumed, 62, 62, [](int) { return 0.95; }).empty());
  EXPECT_EQ(resumed.level(), PolicyLevel::kT2Low);
  EXPECT_TRUE(Feed(resumed, 63, 2000, [](int) { return 0.95; }).empty());
  EXPECT_EQ(resumed.level(), PolicyLevel::kT2Low);
}

TEST(ControlActuation, CommandsLandOnlyAtTheirEffectiveTime) {
  ControlActuation actuation(1410, 288);
  actuation.Submit({Target::kLowPriority, 0, 40, {1275, 0}, false});
  actuation.Submit({Target::kLowPriority, 1, 41, {1110, 0}, false});
  EXPECT_DOUBLE_EQ(actuation.NextChangeAt(), 40);
  EXPECT_FALSE(actuation.ApplyUntil(39.999));
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kLow).freq_mhz, 1410);
  EXPECT_TRUE(actuation.ApplyUntil(40));
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kLow).freq_mhz, 1275);
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kHigh).freq_mhz, 1410);
  EXPECT_TRUE(actuation.ApplyUntil(100));
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kLow).freq_mhz, 1110);
  EXPECT_TRUE(std::isinf(actuation.NextChangeAt()));
  // A faster command sent later lands first (brake latency < actuation latency).
  actuation.Submit({Target::kLowPriority, 100, 140, {0, 0}, false});
  actuation.Submit({Target::kBrake, 101, 106, {}, true});
  actuation.ApplyUntil(106);
  EXPECT_TRUE(actuation.brake_active());
  EXPECT_DOUBLE_EQ(actuation.Limits(Priority::kLow).freq_mhz, 288);
}

// Random row power traces: random walks with bursts, gaps and stale readings.
struct TraceStep {
  double now;
  PowerReading reading;
};

std::vector<TraceStep> RandomTrace(uint64_t seed, int steps) {
  SplitMix64 rng(seed);
  std::vector<TraceStep> trace;
  double p = 0.5 + 0.4 * rng.Uniform();
  double now = 0;
  for (int i = 0; i < steps; ++i) {
    now += 0.5 + 2 * rng.Uniform();
    p += (rng.Uniform() - 0.5) * 0.04;
    if (rng.Uniform() < 0.02) p += (rng.Uniform() - 0.3) * 0.3;  // bursts
    p = std::clamp(p, 0.2, 1.3);
    double age = rng.Uniform() < 0.05 ? 5 + 40 * rng.Uniform() : 2;  // some stale readings
    trace.push_back({now, {now - age, p}});
  }
  return trace;
}

double Effective(double lock_mhz) { return lock_mhz > 0 ? lock_mhz : 1e9; }

TEST(RowPowerPolicyProperty, InvariantsHoldOnRandomTraces) {
  const PolicySpec spec = Spec();
  for (PolicyKind kind : {PolicyKind::kPolca, PolicyKind::kUniformCap, PolicyKind::kBrakeOnly, PolicyKind::kPowerCap,
                          PolicyKind::kHeadroom}) {
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      RowPowerPolicy policy(kind, spec, Control());
      ControlActuation actuation(1410, 288);
      bool brake_expected = false;
      for (const TraceStep& step : RandomTrace(seed, 3000)) {
        const ClassSetting low_before = policy.requested(Priority::kLow);
        const ClassSetting high_before = policy.requested(Priority::kHigh);
        const PolicyLevel level_before = policy.level();
        auto commands = policy.Decide(step.reading, step.now);
        const double p = step.reading.power_fraction;
        const bool fresh = step.now - step.reading.measured_at_s <= Control().max_reading_age_s;
        const ClassSetting& low = policy.requested(Priority::kLow);
        const ClassSetting& high = policy.requested(Priority::kHigh);
        SCOPED_TRACE(PolicyName(kind) + " seed " + std::to_string(seed) + " t " + std::to_string(step.now));

        // Low priority is never less constrained than high priority.
        ASSERT_LE(Effective(low.lock_mhz), Effective(high.lock_mhz));
        if (high.lock_mhz > 0) {
          ASSERT_GT(low.lock_mhz, 0);
        }
        if (high.cap_w > 0) {
          ASSERT_GT(low.cap_w, 0);
        }
        // Above T2 the policy is at least at the T2 level (brake-only has no levels; the
        // headroom policy's levels follow its forecast: at or above its guard it never releases).
        const bool thresholds = kind != PolicyKind::kBrakeOnly && kind != PolicyKind::kHeadroom;
        if (thresholds && p > spec.t2) {
          ASSERT_GE(policy.level(), PolicyLevel::kT2Low);
        }
        if (thresholds && p > spec.t1) {
          ASSERT_GE(policy.level(), PolicyLevel::kT1);
        }
        if (kind == PolicyKind::kHeadroom && p >= spec.headroom_release) {
          ASSERT_GE(policy.level(), level_before);
        }
        // One level at a time.
        ASSERT_LE(std::abs(static_cast<int>(policy.level()) - static_cast<int>(level_before)),
                  kind == PolicyKind::kHeadroom ? 1 : 3);
        // Stale readings never loosen anything.
        if (!fresh) {
          ASSERT_GE(policy.level(), level_before);
          ASSERT_LE(Effective(low.lock_mhz), Effective(low_before.lock_mhz));
          ASSERT_LE(Effective(high.lock_mhz), Effective(high_before.lock_mhz));
        }
        // A step up loosens neither class (the headroom policy's ladder is its own).
        if (policy.level() > level_before) {
          ASSERT_LE(Effective(low.lock_mhz), Effective(low_before.lock_mhz));
          ASSERT_LE(Effective(high.lock_mhz), Effective(high_before.lock_mhz));
        }
        // The brake follows the thresholds exactly.
        if (p > spec.brake)
          brake_expected = true;
        else if (fresh && p < spec.brake_release)
          brake_expected = false;
        ASSERT_EQ(policy.brake_requested(), brake_expected);
        // Every command lands after its latency.
        for (const auto& c : commands) {
          ASSERT_DOUBLE_EQ(c.issued_at_s, step.now);
          ASSERT_NEAR(c.effective_at_s - c.issued_at_s, c.target == Target::kBrake ? 5.0 : 40.0, 1e-9);
          if (kind == PolicyKind::kBrakeOnly) {
            ASSERT_EQ(c.target, Target::kBrake);
          }
          actuation.Submit(c);
        }
        // What is in effect also keeps the priority order, and the brake overrides all.
        actuation.ApplyUntil(step.now);
        GpuLimits low_now = actuation.Limits(Priority::kLow);
        GpuLimits high_now = actuation.Limits(Priority::kHigh);
        ASSERT_LE(low_now.freq_mhz, high_now.freq_mhz);
        if (actuation.brake_active()) {
          ASSERT_DOUBLE_EQ(low_now.freq_mhz, 288);
          ASSERT_DOUBLE_EQ(high_now.freq_mhz, 288);
        }
      }
    }
  }
}

TEST(RowPowerPolicyProperty, IsDeterministic) {
  auto run = [](uint64_t seed) {
    RowPowerPolicy policy(PolicyKind::kPolca, Spec(), Control());
    std::vector<double> out;
    for (const TraceStep& step : RandomTrace(seed, 2000)) {
      for (const auto& c : policy.Decide(step.reading, step.now)) {
        out.push_back(c.effective_at_s);
        out.push_back(c.setting.lock_mhz);
      }
    }
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_FALSE(run(7).empty());
  EXPECT_NE(run(7), run(8));
}

// Two hours of a row that steps from 89 % to 94 % for 30 s every 90 s and reads lower under a lock
// (by the ratio of the levels' ceilings). It never comes near its brake, but the forecast carries
// each step's rise 40 s ahead, above the guard: the policy locks it nearly all the time. Its record
// shows the forecast over-predicting by more than the deadband, and the corrected forecast locks
// the row less. Returns the seconds locked.
constexpr std::array<double, 4> kStepCeilings = {1.30, 1.26, 1.23, 1.18};

int FeedSteps(RowPowerPolicy& policy, int from_s, int to_s) {
  int locked_s = 0;
  for (int t = from_s; t <= to_s; ++t) {
    const double unlocked = (t - 2) % 90 < 30 ? 0.94 : 0.89;
    const double lock = kStepCeilings[static_cast<size_t>(policy.level())] / kStepCeilings[0];
    policy.Decide({t - 2.0, unlocked * lock}, t);
    EXPECT_FALSE(policy.brake_requested());
    if (policy.level() != PolicyLevel::kNormal) ++locked_s;
  }
  return locked_s;
}

int LockedSecondsOnSteps(double deadband, double* correction) {
  PolicySpec spec = Spec();
  spec.headroom_correction_deadband = deadband;
  RowPowerPolicy policy(PolicyKind::kHeadroom, spec, Control());
  policy.SetLevelCeilings(kStepCeilings);
  const int locked_s = FeedSteps(policy, 2, 7200);
  *correction = policy.forecast_correction();
  return locked_s;
}

TEST(RowPowerPolicyHeadroom, AForecastThatOverPredictsTheRowForAnHourIsLowered) {
  double correction = 0;
  const int corrected_s = LockedSecondsOnSteps(Spec().headroom_correction_deadband, &correction);
  EXPECT_LT(correction, -Spec().headroom_correction_deadband);
  double off = 0;
  const int uncorrected_s = LockedSecondsOnSteps(1, &off);
  EXPECT_EQ(off, 0) << "a deadband of 1 turns the correction off";
  EXPECT_GT(uncorrected_s, 7000);
  EXPECT_LT(corrected_s, uncorrected_s - 1000);
}

TEST(RowPowerPolicyHeadroom, AResumedPolicyStartsWithAnEmptyRecord) {
  // A restarted controller's policy has no record: no correction until it has checked 300
  // forecasts again, whatever the row did before.
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.SetLevelCeilings(kStepCeilings);
  FeedSteps(policy, 2, 7200);
  ASSERT_LT(policy.forecast_correction(), -Spec().headroom_correction_deadband);
  policy.Resume(policy.level(), false, 7201);
  FeedSteps(policy, 7202, 7400);  // at most 200 forecasts checked since
  EXPECT_EQ(policy.forecast_correction(), 0);
  FeedSteps(policy, 7401, 9000);
  EXPECT_LT(policy.forecast_correction(), -Spec().headroom_correction_deadband) << "and then it learns again";
}

TEST(RowPowerPolicyHeadroom, ACorrectedForecastNeverExpectsLessThanTheRowReadInItsWindow) {
  // A policy whose record lowers its forecast (the stepping row above), at a locked level, on a row
  // that reads 90 % with a 93 % reading every 30 s: the corrected forecast is below the 92 %
  // release, but the row read above it within the window, so the level holds.
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  policy.SetLevelCeilings(kStepCeilings);
  FeedSteps(policy, 2, 7200);
  ASSERT_LT(policy.forecast_correction(), -Spec().headroom_correction_deadband);
  At(policy, 7201, 0.99);  // one level up (the row read above its guard)
  const PolicyLevel locked = policy.level();
  ASSERT_NE(locked, PolicyLevel::kNormal);
  for (int t = 7202; t <= 7500; ++t) {
    At(policy, t, t % 30 == 0 ? 0.93 : 0.90);
    ASSERT_EQ(policy.level(), locked) << "at " << t << " s";
  }
  ASSERT_LT(policy.forecast_correction(), -Spec().headroom_correction_deadband) << "still corrected";
  ASSERT_LT(0.93 + policy.forecast_correction(), Spec().headroom_release);
  // Once the window holds no reading above the release, it releases: the last 93 % was measured at
  // 7498 s, and the window of the reading measured at 7559 s no longer holds it.
  int released_at = -1;
  for (int t = 7501; t <= 7700 && released_at < 0; ++t) {
    At(policy, t, 0.90);
    if (policy.level() < locked) released_at = t;
  }
  EXPECT_EQ(released_at, 7561);
}

TEST(RowPowerPolicyHeadroom, AForecastThatHoldsTheRowIsNotCorrected) {
  // 96 % all the time: the forecast is the row, error 0, and nothing is taken off it.
  RowPowerPolicy flat(PolicyKind::kHeadroom, Spec(), Control());
  Feed(flat, 2, 3600, [](int) { return 0.96; });
  EXPECT_EQ(flat.forecast_correction(), 0);
  EXPECT_EQ(flat.level(), PolicyLevel::kNormal);
  // Over-predicting by less than the deadband: a row that rises 1 % in its last 10 s of every
  // minute, whose forecast carries that rise ahead by a little, is not corrected either.
  RowPowerPolicy small(PolicyKind::kHeadroom, Spec(), Control());
  Feed(small, 2, 3600, [](int t) { return t % 60 < 50 ? 0.90 : 0.90 + 0.001 * (t % 60 - 50); });
  EXPECT_EQ(small.forecast_correction(), 0);
}

// A row that reads 86 % and spikes to 99 % for one reading every 200 s; 42 s after each spike
// (when the lock sent on it has landed) it rises for a few seconds and stops where it was: for
// the first `learn_s`, 80, 82, 84, 86 %, which a young window (three or four readings) carries 40 s
// ahead to at most 93 %; after that, 80, 85, 90 %, carried to 100 %. Returns the deepest level
// reached after `learn_s`, and the smallest share of a young window's trend and the lowest
// correction of the forecast (full windows') from then on.
PolicyLevel DeepestOnStoppingRises(double deadband, int learn_s, double* share, double* correction) {
  PolicySpec spec = Spec();
  spec.headroom_correction_deadband = deadband;
  RowPowerPolicy policy(PolicyKind::kHeadroom, spec, Control());
  PolicyLevel deepest = PolicyLevel::kNormal;
  *share = 1;
  *correction = 0;
  for (int t = 2; t <= learn_s + 3600; ++t) {
    const int measured_s = t - 2;
    const int c = measured_s % 200;
    double p = 0.86;
    if (c == 0) p = 0.99;
    if (measured_s < learn_s && c >= 42 && c <= 45) p = 0.80 + 0.02 * (c - 42);
    if (measured_s >= learn_s && c >= 42 && c <= 44) p = 0.80 + 0.05 * (c - 42);
    policy.Decide({static_cast<double>(measured_s), p}, t);
    EXPECT_FALSE(policy.brake_requested());
    if (measured_s >= learn_s) {
      deepest = std::max(deepest, policy.level());
      *share = std::min(*share, policy.young_trend_share());
      *correction = std::min(*correction, policy.forecast_correction());
    }
  }
  return deepest;
}

TEST(RowPowerPolicyHeadroom, AYoungWindowCarriesOnlyTheShareOfItsTrendThatCameTrueOnThisRow) {
  // After an hour of rises that stopped, the record has found young windows' trends over-predicting
  // (none of them came true): a steeper rise is expected to stop too, and the spike's lock is enough.
  double share = 1;
  double correction = 0;
  EXPECT_EQ(DeepestOnStoppingRises(Spec().headroom_correction_deadband, 3600, &share, &correction), PolicyLevel::kT1);
  EXPECT_EQ(share, 0);
  EXPECT_EQ(correction, 0) << "full windows expect about 86 %, and the row reads it: not their correction";
  // Untrained, or with the record turned off, the same rise escalates the lock to the middle level.
  EXPECT_GE(DeepestOnStoppingRises(Spec().headroom_correction_deadband, 0, &share, &correction), PolicyLevel::kT2Low);
  EXPECT_GE(DeepestOnStoppingRises(1, 3600, &share, &correction), PolicyLevel::kT2Low);
  EXPECT_EQ(share, 1);
}

TEST(RowPowerPolicyHeadroom, AYoungWindowWhoseTrendsComeTrueKeepsThemWhole) {
  // The same spikes, each followed by a rise that goes on: from 85 % by 0.1 % a second for 100 s.
  // Young windows carry it no further than they have looked back, so they under-predict it, and
  // the policy carries their trend in full.
  RowPowerPolicy policy(PolicyKind::kHeadroom, Spec(), Control());
  for (int t = 2; t <= 7200; ++t) {
    const int measured_s = t - 2;
    const int c = measured_s % 200;
    double p = 0.86;
    if (c == 0) p = 0.99;
    if (c >= 42 && c <= 140) p = 0.85 + 0.001 * (c - 42);
    policy.Decide({static_cast<double>(measured_s), p}, t);
    ASSERT_EQ(policy.young_trend_share(), 1) << "at " << t << " s";
  }
}

}  // namespace
}  // namespace wattcut::polca
