#include "wattcut/emulate/power_sweep.h"

#include <gtest/gtest.h>

#include <cmath>

#include "wattcut/emulate/emulation_charts.h"
#include "wattcut/plan/frontier_power.h"
#include "wattcut/plot/xml_check_testing.h"
#include "wattcut/profile/gpu_model.h"

namespace wattcut {
namespace {

// Times are a little over whole milliseconds so that floor(time / 1 ms) is the intended
// number of units; each computation's power is then energy / (units * 1 ms).
void Add(Profile& profile, int stage, InstructionKind kind, int freq_mhz, double time_s, double energy_j) {
  profile.mutable_measurements(stage, kind).push_back({freq_mhz, time_s + 0.0005, energy_j});
}

struct Swept {
  Profile profile;
  PlannerOptions options;
  PowerSweep sweep;
};

Swept Sweep(Profile profile, int microbatches, double p2p_power_w, const PowerSweepSetup& setup = {}) {
  Swept s;
  s.profile = std::move(profile);
  s.options.num_microbatches = microbatches;
  s.options.p2p_power_w = p2p_power_w;
  Result<PlanningProblem> planning = BuildPlanningProblem(s.profile, s.options);
  EXPECT_TRUE(planning.ok()) << planning.error().message;
  Result<Frontier> frontier = SolveFrontier(*planning);
  EXPECT_TRUE(frontier.ok()) << frontier.error().message;
  Result<PowerSweep> sweep = SweepPower(s.profile, *planning, *frontier, setup);
  EXPECT_TRUE(sweep.ok()) << sweep.error().message;
  s.sweep = *sweep;
  return s;
}

// One stage, two microbatches (F B F B back to back, no idle GPU), two clocks:
//   1000 MHz: F 100 ms 20 J (200 W), B 200 ms 40 J (200 W): T = 0.6 s, 200 W throughout;
//    500 MHz: F 150 ms 18 J (120 W), B 300 ms 36 J (120 W): T = 0.9 s, 120 W throughout.
Profile OneStage() {
  Profile p(1);
  Add(p, 0, InstructionKind::kForward, 1000, 0.100, 20);
  Add(p, 0, InstructionKind::kForward, 500, 0.150, 18);
  Add(p, 0, InstructionKind::kBackward, 1000, 0.200, 40);
  Add(p, 0, InstructionKind::kBackward, 500, 0.300, 36);
  return p;
}

TEST(PowerSweep, OneStageTwoClocksByHand) {
  Swept s = Sweep(OneStage(), 2, 50);
  const PowerSweep& sweep = s.sweep;
  EXPECT_NEAR(sweep.all_max.iteration_time_s, 0.6, 1e-12);
  EXPECT_NEAR(sweep.all_max.avg_power_w, 200, 1e-9);
  EXPECT_NEAR(sweep.all_max.peak_power_w, 200, 1e-9);
  ASSERT_EQ(sweep.uniform_lock.size(), 2u);
  EXPECT_EQ(sweep.uniform_lock[0].freq_mhz, 1000);
  EXPECT_NEAR(sweep.uniform_lock[0].slowdown, 1, 1e-12);
  EXPECT_NEAR(PowerReduction(sweep.uniform_lock[0], sweep.all_max, PowerMetric::kPeak), 0, 1e-12);
  EXPECT_NEAR(PowerReduction(sweep.uniform_lock[0], sweep.all_max, PowerMetric::kAverage), 0, 1e-12);
  EXPECT_EQ(sweep.uniform_lock[1].freq_mhz, 500);
  EXPECT_NEAR(sweep.uniform_lock[1].slowdown, 1.5, 1e-12);
  EXPECT_NEAR(sweep.uniform_lock[1].avg_power_w, 120, 1e-9);
  EXPECT_NEAR(sweep.uniform_lock[1].peak_power_w, 120, 1e-9);
  EXPECT_NEAR(PowerReduction(sweep.uniform_lock[1], sweep.all_max, PowerMetric::kPeak), 0.4, 1e-12);
  // Perseus's frontier runs from every computation slow to every computation fast; with two
  // options the cost model is the line between them, exact at both ends.
  ASSERT_GE(sweep.perseus.size(), 2u);
  const PowerSweepPoint& fastest = sweep.perseus.back();
  const PowerSweepPoint& slowest = sweep.perseus.front();
  EXPECT_LE(fastest.slowdown, 1 + 1e-12);
  EXPECT_NEAR(fastest.avg_power_w, 200, 1e-9);
  EXPECT_NEAR(slowest.slowdown, 1.5, 1e-12);
  EXPECT_NEAR(slowest.avg_power_w, 120, 1e-9);
  EXPECT_NEAR(slowest.peak_power_w, 120, 1e-9);
  for (size_t i = 1; i < sweep.perseus.size(); ++i) {
    EXPECT_LT(sweep.perseus[i].slowdown, sweep.perseus[i - 1].slowdown) << i;
  }
  // POLCA's reference point: no clock between 1000 and 500 MHz, so at slowdown 1.1 the
  // best lock is the highest clock (no reduction); the line between them gives 0.4 * 0.2.
  EXPECT_NEAR(*sweep.reference.uniform_lock_peak_reduction, 0, 1e-12);
  EXPECT_NEAR(*sweep.reference.uniform_lock_interpolated_peak_reduction, 0.08, 1e-12);
}

// Two stages, one microbatch: F0 on stage 0, F0 on stage 1, B0 on stage 1, B0 on stage 0,
// one after the other; the other GPU blocks at 50 W meanwhile.
//   1000 MHz: F 100 ms 30 J (300 W), B 200 ms 40 J (200 W): 350 W for 0.2 s, 250 W for
//     0.4 s: 170 J in T = 0.6 s, 283.33 W on average; the best 1-s window holds one
//     iteration and 0.4 s more: 170 J + 0.2 * 350 + 0.2 * 250 = 290 J, 290 W.
//    500 MHz: F 150 ms 27 J (180 W), B 300 ms 36 J (120 W): 230 W for 0.3 s, 170 W for
//     0.6 s: 171 J in T = 0.9 s, 190 W; peak 171 J + 0.1 * 230 = 194 W.
Profile TwoStages() {
  Profile p(2);
  for (int s = 0; s < 2; ++s) {
    Add(p, s, InstructionKind::kForward, 1000, 0.100, 30);
    Add(p, s, InstructionKind::kForward, 500, 0.150, 27);
    Add(p, s, InstructionKind::kBackward, 1000, 0.200, 40);
    Add(p, s, InstructionKind::kBackward, 500, 0.300, 36);
  }
  return p;
}

TEST(PowerSweep, TwoStagesWithBlockingPowerByHand) {
  Swept s = Sweep(TwoStages(), 1, 50);
  const PowerSweep& sweep = s.sweep;
  EXPECT_NEAR(sweep.all_max.iteration_time_s, 0.6, 1e-12);
  EXPECT_NEAR(sweep.all_max.avg_power_w, 170 / 0.6, 1e-9);
  EXPECT_NEAR(sweep.all_max.peak_power_w, 290, 1e-9);
  ASSERT_EQ(sweep.uniform_lock.size(), 2u);
  const PowerSweepPoint& slow = sweep.uniform_lock[1];
  EXPECT_NEAR(slow.slowdown, 1.5, 1e-12);
  EXPECT_NEAR(slow.avg_power_w, 190, 1e-9);
  EXPECT_NEAR(slow.peak_power_w, 194, 1e-9);
  EXPECT_NEAR(PowerReduction(slow, sweep.all_max, PowerMetric::kAverage), 1 - 190 / (170 / 0.6), 1e-12);
  EXPECT_NEAR(PowerReduction(slow, sweep.all_max, PowerMetric::kPeak), 1 - 194.0 / 290, 1e-12);
}

TEST(PowerSweep, TensorParallelismScalesPowersNotRatiosAndTimeScaleStretchesTime) {
  PowerSweepSetup setup;
  setup.tensor_parallel = 4;
  setup.time_scale = 10;
  Swept one = Sweep(TwoStages(), 1, 50);
  Swept scaled = Sweep(TwoStages(), 1, 50, setup);
  EXPECT_NEAR(scaled.sweep.all_max.iteration_time_s, 6, 1e-9);
  EXPECT_NEAR(scaled.sweep.all_max.avg_power_w, 4 * one.sweep.all_max.avg_power_w, 1e-9);
  // A 1-s window of a 6-s iteration fits in its 2 s at 350 W.
  EXPECT_NEAR(scaled.sweep.all_max.peak_power_w, 4 * 350, 1e-9);
  ASSERT_EQ(scaled.sweep.uniform_lock.size(), one.sweep.uniform_lock.size());
  for (size_t i = 0; i < one.sweep.uniform_lock.size(); ++i) {
    EXPECT_NEAR(scaled.sweep.uniform_lock[i].slowdown, one.sweep.uniform_lock[i].slowdown, 1e-12);
    EXPECT_NEAR(PowerReduction(scaled.sweep.uniform_lock[i], scaled.sweep.all_max, PowerMetric::kAverage),
                PowerReduction(one.sweep.uniform_lock[i], one.sweep.all_max, PowerMetric::kAverage), 1e-12);
  }
}

TEST(PowerSweep, ClockAStageDidNotMeasureIsSkipped) {
  Profile p = TwoStages();
  Add(p, 1, InstructionKind::kForward, 750, 0.120, 28);
  Swept s = Sweep(p, 1, 50);
  EXPECT_EQ(s.sweep.skipped_clocks_mhz, std::vector<int>{750});
  EXPECT_EQ(s.sweep.uniform_lock.size(), 2u);
}

PowerSweepPoint Point(double slowdown, double avg_w, double peak_w, int freq = 0, size_t plan = 0) {
  PowerSweepPoint p;
  p.slowdown = slowdown;
  p.avg_power_w = avg_w;
  p.peak_power_w = peak_w;
  p.freq_mhz = freq;
  p.plan_index = plan;
  return p;
}

TEST(PowerSweep, ReachIsTheFirstPointAndTheInterpolatedCrossing) {
  const PowerSweepPoint all_max = Point(1, 100, 200);
  // Out of order on purpose: reductions (avg, peak) 0/0, 5/10, 15/25 %.
  std::vector<PowerSweepPoint> points = {Point(1.3, 85, 150, 900), Point(1.0, 100, 200, 1400),
                                         Point(1.1, 95, 180, 1200)};
  ReductionReach avg = FindReduction(points, all_max, PowerMetric::kAverage, 0.10, "uniform-lock");
  ASSERT_TRUE(avg.slowdown);
  EXPECT_DOUBLE_EQ(*avg.slowdown, 1.3);
  EXPECT_EQ(*avg.freq_mhz, 900);
  EXPECT_NEAR(*avg.reduction, 0.15, 1e-12);
  EXPECT_NEAR(*avg.interpolated_slowdown, 1.2, 1e-12);  // halfway from 5 % to 15 %
  ReductionReach peak = FindReduction(points, all_max, PowerMetric::kPeak, 0.10, "uniform-lock");
  EXPECT_DOUBLE_EQ(*peak.slowdown, 1.1);  // exactly 10 %, up to rounding
  EXPECT_NEAR(*peak.interpolated_slowdown, 1.1, 1e-9);
  ReductionReach none = FindReduction(points, all_max, PowerMetric::kPeak, 0.30, "uniform-lock");
  EXPECT_FALSE(none.slowdown);
  EXPECT_FALSE(none.interpolated_slowdown);
  EXPECT_NE(none.reason.find("uniform-lock reaches at most 25.00 % peak power reduction"), std::string::npos)
      << none.reason;
  EXPECT_NE(none.reason.find("900 MHz"), std::string::npos) << none.reason;
  // Reached at the first point: no segment before it.
  ReductionReach zero = FindReduction(points, all_max, PowerMetric::kAverage, 0.0, "uniform-lock");
  EXPECT_DOUBLE_EQ(*zero.interpolated_slowdown, 1.0);

  EXPECT_NEAR(*InterpolatedReductionAt(points, all_max, PowerMetric::kAverage, 1.2), 0.10, 1e-12);
  EXPECT_FALSE(InterpolatedReductionAt(points, all_max, PowerMetric::kAverage, 1.4));
  EXPECT_NEAR(*BestReductionWithin(points, all_max, PowerMetric::kPeak, 1.2), 0.10, 1e-12);
  EXPECT_FALSE(BestReductionWithin(points, all_max, PowerMetric::kPeak, 0.9));
}

TEST(PowerSweep, TableRatiosAndGoal) {
  PowerSweep sweep;
  sweep.all_max = Point(1, 100, 100);
  sweep.uniform_lock = {Point(1, 100, 100, 1400), Point(1.2, 90, 95, 1000), Point(1.4, 80, 85, 800)};
  sweep.perseus = {Point(1.3, 70, 92, 0, 0), Point(1.05, 90, 99, 0, 1), Point(0.999, 99, 100, 0, 2)};
  std::vector<PowerSweepRow> rows = PowerSweepTable(sweep, {0.10, 0.25});
  ASSERT_EQ(rows.size(), 4u);
  // Average, 10 %: uniform at 1.2, perseus at 1.05: ratio 0.05 / 0.2 = 0.25, met.
  const PowerSweepRow& avg10 = rows[2];
  EXPECT_EQ(avg10.metric, PowerMetric::kAverage);
  EXPECT_NEAR(*avg10.slowdown_ratio, 0.25, 1e-12);
  EXPECT_NEAR(*avg10.perseus_reduction_at_uniform_slowdown, 0.10, 1e-12);
  EXPECT_NEAR(*avg10.reduction_ratio, 1, 1e-12);
  EXPECT_TRUE(avg10.goal_met);
  // Peak, 10 %: uniform at 1.4 (15 %), perseus never below 92 W (8 %): null with a reason.
  const PowerSweepRow& peak10 = rows[0];
  EXPECT_TRUE(peak10.uniform_lock.slowdown);
  EXPECT_FALSE(peak10.perseus.slowdown);
  EXPECT_FALSE(peak10.slowdown_ratio);
  EXPECT_NE(peak10.reason.find("perseus reaches at most 8.00 %"), std::string::npos) << peak10.reason;
  EXPECT_NEAR(*peak10.perseus_reduction_at_uniform_slowdown, 0.08, 1e-12);
  EXPECT_FALSE(peak10.goal_met);
  // Average, 25 %: uniform never reaches it (20 % at most), perseus at 1.3.
  const PowerSweepRow& avg25 = rows[3];
  EXPECT_FALSE(avg25.uniform_lock.slowdown);
  EXPECT_TRUE(avg25.perseus.slowdown);
  EXPECT_FALSE(avg25.goal_met);
  EXPECT_NE(avg25.reason.find("uniform-lock reaches at most 20.00 %"), std::string::npos) << avg25.reason;
}

class PowerSweepSchedule : public ::testing::TestWithParam<PipelineScheduleKind> {};

// The same checks on 1F1B and on ZB-H1, whose split backward the profile did not measure
// (both methods plan it as halves of the backward).
TEST_P(PowerSweepSchedule, ModelProfileIsConsistent) {
  const GpuModel* model = *FindGpuModel("a100-sxm");
  Profile profile = MakeModelProfile(*model, 4);
  PlannerOptions options;
  options.schedule = GetParam();
  options.num_microbatches = 4;
  options.p2p_power_w = model->p2p_power_w;
  options.unit_time_s = 0.005;
  Result<PlanningProblem> planning = BuildPlanningProblem(profile, options);
  ASSERT_TRUE(planning.ok()) << planning.error().message;
  Result<Frontier> frontier = SolveFrontier(*planning);
  ASSERT_TRUE(frontier.ok());
  Result<PowerSweep> sweep = SweepPower(profile, *planning, *frontier, {});
  ASSERT_TRUE(sweep.ok()) << sweep.error().message;
  ASSERT_FALSE(sweep->uniform_lock.empty());
  EXPECT_TRUE(sweep->skipped_clocks_mhz.empty());
  // The highest clock is AllMax.
  EXPECT_EQ(sweep->uniform_lock.front().freq_mhz, profile.max_freq_mhz());
  EXPECT_NEAR(sweep->uniform_lock.front().slowdown, 1, 1e-12);
  EXPECT_NEAR(PowerReduction(sweep->uniform_lock.front(), sweep->all_max, PowerMetric::kPeak), 0, 1e-12);
  EXPECT_NEAR(PowerReduction(sweep->uniform_lock.front(), sweep->all_max, PowerMetric::kAverage), 0, 1e-12);
  // Lower clocks are slower; a peak is never below the average.
  for (size_t i = 1; i < sweep->uniform_lock.size(); ++i) {
    EXPECT_GE(sweep->uniform_lock[i].slowdown, sweep->uniform_lock[i - 1].slowdown) << i;
  }
  for (const auto* points : {&sweep->uniform_lock, &sweep->perseus}) {
    for (const PowerSweepPoint& p : *points) EXPECT_GE(p.peak_power_w, p.avg_power_w * (1 - 1e-12));
  }
  ASSERT_EQ(sweep->perseus.size(), frontier->points().size());
  EXPECT_LE(sweep->perseus.back().slowdown, 1 + 1e-12);
  // Perseus's average power is its timeline's energy over T.
  Result<FrontierPower> power = FrontierPower::Create(*frontier, planning->problem);
  ASSERT_TRUE(power.ok());
  for (size_t i : {size_t{0}, frontier->points().size() / 2, frontier->fastest_index()}) {
    Result<PowerTimeline> timeline = power->Timeline(frontier->DurationsAt(i));
    ASSERT_TRUE(timeline.ok());
    double energy = 0;
    for (size_t j = 0; j < timeline->power_w.size(); ++j) {
      energy += timeline->power_w[j] * (timeline->time_s[j + 1] - timeline->time_s[j]);
    }
    EXPECT_NEAR(sweep->perseus[i].avg_power_w, energy / timeline->time_s.back(), 1e-9 * energy) << i;
  }
  EXPECT_EQ(sweep->table.size(), 8u);
}

INSTANTIATE_TEST_SUITE_P(Schedules, PowerSweepSchedule,
                         ::testing::Values(PipelineScheduleKind::k1F1B, PipelineScheduleKind::kZeroBubbleH1));

TEST(PowerSweep, JsonFormatNullsWhatIsNotReached) {
  PowerSweepSetup setup;
  setup.reduction_targets = {0.05, 0.9};
  Swept s = Sweep(OneStage(), 2, 50, setup);
  nlohmann::json j = PowerSweepToJson(s.sweep, {{"profile", "hand"}});
  EXPECT_EQ(j["format"], "wattcut.power_sweep/v1");
  EXPECT_EQ(j["config"]["profile"], "hand");
  EXPECT_DOUBLE_EQ(j["all_max"]["avg_power_w"].get<double>(), s.sweep.all_max.avg_power_w);
  ASSERT_EQ(j["methods"].size(), 2u);
  EXPECT_EQ(j["methods"][0]["method"], "uniform-lock");
  EXPECT_EQ(j["methods"][1]["method"], "perseus");
  EXPECT_EQ(j["methods"][0]["points"].size(), 2u);
  EXPECT_EQ(j["methods"][0]["points"][1]["freq_mhz"], 500);
  for (const char* field : {"slowdown", "avg_power_w", "peak_power_w", "iteration_time_s"}) {
    EXPECT_TRUE(j["methods"][1]["points"][0][field].is_number()) << field;
  }
  ASSERT_EQ(j["table"].size(), 4u);
  const nlohmann::json& reached = j["table"][0];
  EXPECT_EQ(reached["metric"], "peak");
  EXPECT_DOUBLE_EQ(reached["target_reduction"].get<double>(), 0.05);
  EXPECT_TRUE(reached["uniform-lock"]["slowdown"].is_number());
  EXPECT_EQ(reached["uniform-lock"]["freq_mhz"], 500);
  EXPECT_TRUE(reached["perseus"]["plan"].is_number());
  const nlohmann::json& unreachable = j["table"][1];
  EXPECT_TRUE(unreachable["uniform-lock"]["slowdown"].is_null());
  EXPECT_TRUE(unreachable["slowdown_ratio"].is_null());
  EXPECT_NE(unreachable["uniform-lock"]["reason"].get<std::string>().find("reaches at most 40.00 %"),
            std::string::npos);
  EXPECT_FALSE(unreachable["goal_met"].get<bool>());
  EXPECT_DOUBLE_EQ(j["reference"]["peak_reduction"].get<double>(), 0.22);
  std::string text = PowerSweepTableText(s.sweep);
  EXPECT_NE(text.find("not reached"), std::string::npos) << text;
  EXPECT_NE(text.find("(500 MHz)"), std::string::npos) << text;
}

TEST(PowerSweep, ChartIsWellFormedWithFourCurvesAndTheReference) {
  Swept s = Sweep(TwoStages(), 1, 50);
  std::string svg = PowerSweepChartSvg(s.sweep, "Sweep & <test>", 1.1, 0.22, "POLCA: 22 % at 10 %");
  EXPECT_EQ(plot::testing::XmlProblem(svg), "");
  for (const char* label :
       {"uniform lock, peak", "uniform lock, average", "Perseus, peak", "Perseus, average", "POLCA: 22 % at 10 %"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

}  // namespace
}  // namespace wattcut
