#include "wattcut/polca/power_trace_replay.h"

#include <gtest/gtest.h>

#include <string>

namespace wattcut::polca {
namespace {

// One server of the A100 config (8 GPUs, other_idle_w 1700, other_w_per_gpu_w 0.15, idle 80 W,
// f_max 1410 MHz, gamma = min(1.2, 1.0) = 1) in a 5 kW row, a reading every second.
PolcaConfig OneServerRowOf5Kw() {
  PolcaConfig c = *BuiltInConfig("a100");
  c.row.baseline_servers = 1;
  c.row.budget_w = 5000;
  c.control.telemetry_period_s = 1;
  c.control.telemetry_delay_s = 1;
  c.control.actuation_latency_s = 2;
  c.control.brake_latency_s = 1;
  return c;
}

PowerTrace Trace(const std::string& text) {
  Result<PowerTrace> t = PowerTrace::Parse(text, "p.csv");
  EXPECT_TRUE(t.ok()) << t.error().message;
  return *t;
}

TEST(EstimateServerPowerW, HandComputedThroughThePowerModel) {
  const PolcaConfig c = OneServerRowOf5Kw();
  // 4460 W: GPUs at (4460 - 1700) / (8 x 1.15) = 300 W each. At 1110 MHz:
  // 80 + 220 x 1110 / 1410 = 253.1915 W, so 1700 + 9.2 x 253.1915 = 4029.362 W.
  EXPECT_NEAR(EstimateServerPowerW(c, 4460, {1110, 0}), 4029.362, 1e-3);
  EXPECT_DOUBLE_EQ(EstimateServerPowerW(c, 4460, {1410, 0}), 4460);
  // A 250 W cap at the max clock: 1700 + 9.2 x 250 = 4000 W.
  EXPECT_NEAR(EstimateServerPowerW(c, 4460, {1410, 250}), 4000, 1e-9);
  // At or below idle (1700 + 9.2 x 80 = 2436 W) nothing is cut.
  EXPECT_DOUBLE_EQ(EstimateServerPowerW(c, 2000, {288, 0}), 2000);
}

TEST(ReplayPriorities, ShareSpreadsLowPriorityInFileOrderUnlessTheTraceSays) {
  PowerTrace four = Trace("time,server,power_w\n0,a,1\n0,b,1\n0,c,1\n0,d,1\n");
  std::vector<Priority> p = ReplayPriorities(four, 0.5);
  EXPECT_EQ(p, (std::vector<Priority>{Priority::kHigh, Priority::kLow, Priority::kHigh, Priority::kLow}));
  EXPECT_EQ(ReplayPriorities(four, 0), std::vector<Priority>(4, Priority::kHigh));
  PowerTrace given = Trace("time,server,power_w,priority\n0,a,1,low\n0,b,1,low\n");
  EXPECT_EQ(ReplayPriorities(given, 0), std::vector<Priority>(2, Priority::kLow));
}

// One low-priority server crosses T1 (80 %) for four readings and falls back, by hand:
//  t 0-2: 3000 W (60 %);  t 3-6: 4200 W (84 %);  t 7-12: 3000 W.
//  The reading of t=3 reaches the policy at 4 (delay 1): T1, low locked to 1275 MHz from 6
//  (latency 2). At 1275 MHz 4200 W becomes 1700 + 9.2 x (80 + 191.739 x 1275/1410) = 4031.1 W
//  (80.6 %, above T1's release 75 %, so the lock holds) and 3000 W becomes 2945.9 W (58.9 %);
//  the reading of t=7 releases at 8, in effect from 10.
TEST(ReplayPowerTrace, OneServerCrossingT1ThenFalling) {
  std::string csv = "time,server,power_w,priority\n";
  for (int t = 0; t <= 12; ++t) csv += std::to_string(t) + ",s," + (t >= 3 && t <= 6 ? "4200" : "3000") + ",low\n";
  Result<ReplayResult> r = ReplayPowerTrace(Trace(csv), OneServerRowOf5Kw(), {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->periods.size(), 13u);
  const double at_t1 = 1700 + 9.2 * (80 + ((4200 - 1700) / 9.2 - 80) * 1275 / 1410);
  const double low_at_t1 = 1700 + 9.2 * (80 + ((3000 - 1700) / 9.2 - 80) * 1275 / 1410);
  const double after[13] = {3000,      3000,      3000,      4200, 4200, 4200, at_t1,
                            low_at_t1, low_at_t1, low_at_t1, 3000, 3000, 3000};
  for (int t = 0; t <= 12; ++t) {
    const ReplayPeriod& p = r->periods[static_cast<size_t>(t)];
    EXPECT_DOUBLE_EQ(p.time_s, t);
    EXPECT_DOUBLE_EQ(p.before_w, t >= 3 && t <= 6 ? 4200 : 3000) << t;
    EXPECT_NEAR(p.after_w, after[t], 1e-9) << t;
    EXPECT_EQ(p.level, t >= 4 && t <= 7 ? PolicyLevel::kT1 : PolicyLevel::kNormal) << t;
  }
  EXPECT_NEAR(at_t1, 4031.1, 0.1);
  ASSERT_EQ(r->commands.size(), 2u);
  EXPECT_EQ(r->commands[0].target, ControlCommand::Target::kLowPriority);
  EXPECT_DOUBLE_EQ(r->commands[0].issued_at_s, 4);
  EXPECT_DOUBLE_EQ(r->commands[0].effective_at_s, 6);
  EXPECT_DOUBLE_EQ(r->commands[0].setting.lock_mhz, 1275);
  EXPECT_DOUBLE_EQ(r->commands[1].issued_at_s, 8);
  EXPECT_DOUBLE_EQ(r->commands[1].setting.lock_mhz, 0);
  EXPECT_EQ(r->low_commands, 2);
  EXPECT_EQ(r->high_commands, 0);
  EXPECT_EQ(r->brake_engagements, 0);
  EXPECT_DOUBLE_EQ(r->level_s[1], 4);
  EXPECT_DOUBLE_EQ(r->level_s[0], 9);
  EXPECT_DOUBLE_EQ(r->before_peak, 0.84);
  EXPECT_DOUBLE_EQ(r->after_peak, 0.84);
  EXPECT_NEAR(r->before_energy_kwh, (9 * 3000 + 4 * 4200) / 3.6e6, 1e-12);
  double after_j = 0;
  for (double w : after) after_j += w;
  EXPECT_NEAR(r->after_energy_kwh, after_j / 3.6e6, 1e-12);
  EXPECT_LT(r->after_energy_kwh, r->before_energy_kwh);
  EXPECT_TRUE(r->gaps.empty());
}

TEST(ReplayPowerTrace, QuietTraceChangesNothing) {
  std::string csv = "time,server,power_w\n";
  for (int t = 0; t < 30; ++t) {
    for (const char* s : {"a", "b", "c"})
      csv += std::to_string(t) + "," + s + "," + std::to_string(1000 + 10 * t) + "\n";
  }
  PolcaConfig c = OneServerRowOf5Kw();
  c.row.budget_w = 10000;  // 3 x 1290 W at most: 39 %
  Result<ReplayResult> r = ReplayPowerTrace(Trace(csv), c, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->commands.empty());
  for (const ReplayPeriod& p : r->periods) {
    EXPECT_DOUBLE_EQ(p.after_w, p.before_w);
    EXPECT_EQ(p.level, PolicyLevel::kNormal);
    EXPECT_FALSE(p.brake);
  }
  EXPECT_DOUBLE_EQ(r->after_energy_kwh, r->before_energy_kwh);
  EXPECT_DOUBLE_EQ(r->after_peak, r->before_peak);
  EXPECT_DOUBLE_EQ(r->level_s[0], 30);
}

// A four-server row through T1, T2 (both classes) and the brake, with a server missing for a
// while: the commands are exactly those a RowPowerPolicy of its own emits over the readings the
// replay reports (the after power, measured when the replay says, decided telemetry_delay_s later).
TEST(ReplayPowerTrace, CommandsEqualADirectPolicyRunOverTheSameReadings) {
  PolcaConfig c = OneServerRowOf5Kw();
  c.row.budget_w = 4 * 5000;
  std::string csv = "time,server,power_w,priority\n";
  auto load = [](int t) {  // per server, W: up to 105 % of the budget and back
    if (t < 10) return 3000;
    if (t < 30) return 4300;
    if (t < 60) return 4700;
    if (t < 70) return 6000;
    if (t < 90) return 4400;
    return 2800;
  };
  for (int t = 0; t < 120; ++t) {
    for (int s = 0; s < 4; ++s) {
      if (s == 3 && t > 40 && t < 55) continue;  // a gap of 14 s
      csv += std::to_string(t) + ",s" + std::to_string(s) + "," + std::to_string(load(t) + 10 * s) + "," +
             (s % 2 ? "low" : "high") + "\n";
    }
  }
  Result<ReplayResult> r = ReplayPowerTrace(Trace(csv), c, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GT(r->brake_engagements, 0);
  EXPECT_GT(r->high_commands, 0);
  EXPECT_GT(r->low_commands, 0);
  ASSERT_EQ(r->gaps.size(), 1u);
  EXPECT_EQ(r->gaps[0].server, "s3");
  EXPECT_DOUBLE_EQ(r->gaps[0].from_s, 40);
  EXPECT_DOUBLE_EQ(r->gaps[0].to_s, 55);
  EXPECT_EQ(r->warnings.size(), 1u);

  RowPowerPolicy direct(PolicyKind::kPolca, c.policy, c.control);
  std::vector<ControlCommand> expected;
  const double end = r->periods.back().time_s;
  for (const ReplayPeriod& p : r->periods) {
    const double decided_at = p.time_s + c.control.telemetry_delay_s;
    if (decided_at > end) break;
    for (const ControlCommand& cmd : direct.Decide({p.measured_at_s, p.after_w / r->budget_w}, decided_at)) {
      expected.push_back(cmd);
    }
  }
  ASSERT_EQ(r->commands.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r->commands[i].target, expected[i].target) << i;
    EXPECT_DOUBLE_EQ(r->commands[i].issued_at_s, expected[i].issued_at_s) << i;
    EXPECT_DOUBLE_EQ(r->commands[i].effective_at_s, expected[i].effective_at_s) << i;
    EXPECT_EQ(r->commands[i].setting, expected[i].setting) << i;
    EXPECT_EQ(r->commands[i].brake_on, expected[i].brake_on) << i;
  }
  EXPECT_EQ(r->brake_engagements, direct.brake_engagements());
  EXPECT_LT(r->after_energy_kwh, r->before_energy_kwh);
}

// A server missing longer than the gap counts at its last reading until the gap has passed and
// at its highest reading so far afterwards; the row's reading is then as old as its last one.
TEST(ReplayPowerTrace, GapCountsAtLastReadingThenAtPeak) {
  PolcaConfig c = OneServerRowOf5Kw();
  c.row.budget_w = 100000;  // nothing crosses
  std::string csv = "time,server,power_w\n0,a,100\n1,a,900\n2,a,200\n10,a,300\n";
  for (int t = 0; t <= 10; ++t) csv += std::to_string(t) + ",b,50\n";
  Result<ReplayResult> r = ReplayPowerTrace(Trace(csv), c, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(r->gap_s, 3);  // 3 x max(1 s period, 1 s median interval)
  ASSERT_EQ(r->periods.size(), 11u);
  // t=5: a's last reading is from 2, 3 s ago: not more than the gap, so at its last reading.
  EXPECT_DOUBLE_EQ(r->periods[5].before_w, 200 + 50);
  EXPECT_DOUBLE_EQ(r->periods[5].measured_at_s, 5);
  // t=6: a is in its gap, at its peak so far, 900 W; the row's reading is as old as a's last.
  EXPECT_DOUBLE_EQ(r->periods[6].before_w, 900 + 50);
  EXPECT_DOUBLE_EQ(r->periods[6].measured_at_s, 2);
  EXPECT_DOUBLE_EQ(r->periods[9].before_w, 900 + 50);
  EXPECT_DOUBLE_EQ(r->periods[10].before_w, 300 + 50);
  EXPECT_DOUBLE_EQ(r->periods[10].measured_at_s, 10);
  ASSERT_EQ(r->gaps.size(), 1u);
  EXPECT_EQ(r->gaps[0].server, "a");
  EXPECT_DOUBLE_EQ(r->gaps[0].from_s, 2);
  EXPECT_DOUBLE_EQ(r->gaps[0].to_s, 10);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0],
            "server 'a' has no reading from 2 s to 10 s (more than the gap of 3 s): counted at its last reading for "
            "3 s, then at its highest reading so far");
  // A gap set by hand.
  ReplayOptions wide;
  wide.gap_s = 10;
  Result<ReplayResult> w = ReplayPowerTrace(Trace(csv), c, wide);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->gaps.empty());
  EXPECT_DOUBLE_EQ(w->periods[6].before_w, 200 + 50);
}

TEST(ReplayPowerTrace, RefusesTooManyPeriodsAndBadGaps) {
  PolcaConfig c = OneServerRowOf5Kw();
  c.control.telemetry_period_s = 0.01;
  Result<ReplayResult> r = ReplayPowerTrace(Trace("time,server,power_w\n0,a,1\n86400,a,1\n"), c, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("more than the 5000000 a replay may hold"), std::string::npos) << r.error().message;
  ReplayOptions o;
  o.gap_s = -1;
  EXPECT_FALSE(ReplayPowerTrace(Trace("time,server,power_w\n0,a,1\n"), OneServerRowOf5Kw(), o).ok());
}

}  // namespace
}  // namespace wattcut::polca
