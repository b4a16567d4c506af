#include "wattcut/server/schedule_decision.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

using Mode = ScheduleDecision::Mode;

// Energy falls from the slowest point to T* (index 2) and rises to the fastest (index 4).
Frontier FiveTimes() {
  Frontier::Setup setup;
  setup.schedule = {{{InstructionKind::kForward, 0}, {InstructionKind::kBackward, 0}}};
  setup.options = {{{{1, 1410}, {2, 900}}, {{1, 1410}, {2, 900}}}};
  Frontier frontier(setup, {2, 2});
  frontier.AddPoint({14, 0.014, 120, 0}, {});
  frontier.AddPoint({13, 0.013, 110, 0}, {{0, 1}});
  frontier.AddPoint({12, 0.012, 100, 0}, {{1, 1}});
  frontier.AddPoint({11, 0.011, 115, 0}, {});
  frontier.AddPoint({10, 0.010, 130, 0}, {});
  return frontier;
}

ScheduleInputs Ready(const Frontier& frontier) {
  ScheduleInputs in;
  in.job_id = "j";
  in.frontier_state = FrontierState::kReady;
  in.frontier = &frontier;
  in.num_microbatches = 4;
  in.has_profile = true;
  return in;
}

ScheduleInputs NoProfile() {
  ScheduleInputs in;
  in.job_id = "j";
  in.num_microbatches = 4;
  in.declared_freqs_mhz = {{1410, 1200, 900}, {1410, 900}};
  in.may_start_profiling = true;
  return in;
}

TEST(ScheduleDecision, ReadyServesTheFastestPlanByDefault) {
  Frontier frontier = FiveTimes();
  ScheduleDecision d = DecideSchedule(Ready(frontier));
  EXPECT_EQ(d.mode, Mode::kPlan);
  EXPECT_EQ(d.base_index, 4u);
  EXPECT_EQ(d.PlanIndexFor(0), 4u);
  EXPECT_TRUE(d.straggler_dp.empty());
}

TEST(ScheduleDecision, ReadyServesTheSelectedPlan) {
  Frontier frontier = FiveTimes();
  ScheduleInputs in = Ready(frontier);
  in.selection = {PlanSelection::Kind::kMinEnergy, 0};
  EXPECT_EQ(DecideSchedule(in).base_index, 2u);
  in.selection = {PlanSelection::Kind::kIndex, 1};
  EXPECT_EQ(DecideSchedule(in).base_index, 1u);
  in.selection = {PlanSelection::Kind::kIndex, 99};  // past the end: the fastest
  EXPECT_EQ(DecideSchedule(in).base_index, 4u);
  in.selection = {PlanSelection::Kind::kIterationTime, 0.0115};
  EXPECT_EQ(DecideSchedule(in).base_index, 3u);
}

TEST(ScheduleDecision, StragglersSlowTheOtherPipelinesToTheirPace) {
  Frontier frontier = FiveTimes();
  ScheduleInputs in = Ready(frontier);
  in.stragglers[1] = Straggler{StragglerReport::Kind::kIterationTime, 0.0131};
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.mode, Mode::kPlan);
  EXPECT_DOUBLE_EQ(d.straggler_time_s, 0.0131);
  EXPECT_EQ(d.non_straggler_index, 2u);  // min(T', T*): T* is faster than T'
  EXPECT_EQ(d.PlanIndexFor(1), 4u);      // the straggler keeps the selected plan
  EXPECT_EQ(d.PlanIndexFor(0), 2u);
  // A slowdown factor is over the selected plan's time; the slowest straggler counts.
  in.stragglers[2] = Straggler{StragglerReport::Kind::kSlowdown, 1.1};  // 0.011 s
  in.stragglers[1] = Straggler{StragglerReport::Kind::kIterationTime, 0.0105};
  d = DecideSchedule(in);
  EXPECT_DOUBLE_EQ(d.straggler_time_s, 0.011);
  EXPECT_EQ(d.non_straggler_index, 3u);
  EXPECT_EQ(d.straggler_dp, (std::set<int>{1, 2}));
}

TEST(ScheduleDecision, ARecoveredStragglerLeavesEveryPipelineOnTheSelectedPlan) {
  Frontier frontier = FiveTimes();
  ScheduleInputs in = Ready(frontier);
  in.stragglers[1] = Straggler{StragglerReport::Kind::kIterationTime, 0.0131};
  EXPECT_EQ(DecideSchedule(in).PlanIndexFor(0), 2u);
  in.stragglers.erase(1);  // POST stragglers {"dp_rank": 1, "recovered": true}
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.PlanIndexFor(0), 4u);
  EXPECT_EQ(d.PlanIndexFor(1), 4u);
}

TEST(ScheduleDecision, ComputingOrFailedServesAllMax) {
  for (FrontierState state : {FrontierState::kComputing, FrontierState::kFailed}) {
    ScheduleInputs in = NoProfile();
    in.has_profile = true;
    in.frontier_state = state;
    ScheduleDecision d = DecideSchedule(in);
    EXPECT_EQ(d.mode, Mode::kAllMax) << FrontierStateName(state);
    EXPECT_TRUE(d.start_sweep_freqs_mhz.empty());
  }
}

TEST(ScheduleDecision, NoNumMicrobatchesIsAConflict) {
  ScheduleInputs in = NoProfile();
  in.num_microbatches = 0;
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.mode, Mode::kError);
  EXPECT_EQ(d.error.code, ErrorCode::kConflict);
  EXPECT_EQ(d.error.message,
            "job 'j' has no num_microbatches: set it with PUT /v1/jobs/{job_id}/planner (or start the server with "
            "--microbatches)");
  // A ready frontier is served even so (it was computed with the settings it has).
  Frontier frontier = FiveTimes();
  ScheduleInputs ready = Ready(frontier);
  ready.num_microbatches = 0;
  EXPECT_EQ(DecideSchedule(ready).mode, Mode::kPlan);
}

TEST(ScheduleDecision, AnInstructionOrderThatCannotBeBuiltIsAConflict) {
  ScheduleInputs in = NoProfile();
  in.schedule_error = "interleaved needs microbatches a multiple of the stages";
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.mode, Mode::kError);
  EXPECT_EQ(d.error.message, "interleaved needs microbatches a multiple of the stages");
}

TEST(ScheduleDecision, TheFirstRoundWithoutAProfileStartsTheSweep) {
  ScheduleDecision d = DecideSchedule(NoProfile());
  EXPECT_EQ(d.mode, Mode::kProfiling);
  EXPECT_EQ(d.profiling_freq_mhz, 1410);
  EXPECT_EQ(d.start_sweep_freqs_mhz, (std::vector<int>{1410, 900}));
}

TEST(ScheduleDecision, APreviewDoesNotStartTheSweep) {
  ScheduleInputs in = NoProfile();
  in.may_start_profiling = false;
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.mode, Mode::kAllMax);
  EXPECT_TRUE(d.start_sweep_freqs_mhz.empty());
}

TEST(ScheduleDecision, ASweepInProgressServesItsStep) {
  ScheduleInputs in = NoProfile();
  in.sweep.active = true;
  in.sweep.freqs_mhz = {1410, 900};
  in.sweep.step = 1;
  ScheduleDecision d = DecideSchedule(in);
  EXPECT_EQ(d.mode, Mode::kProfiling);
  EXPECT_EQ(d.profiling_freq_mhz, 900);
  EXPECT_TRUE(d.start_sweep_freqs_mhz.empty());
  in.may_start_profiling = false;  // a preview of a sweep shows the sweep
  EXPECT_EQ(DecideSchedule(in).mode, Mode::kProfiling);
}

TEST(ScheduleDecision, ADoneSweepOrNoSharedFrequencyServesAllMax) {
  ScheduleInputs done = NoProfile();
  done.sweep.active = true;
  done.sweep.done = true;
  done.sweep.freqs_mhz = {1410};
  done.sweep.step = 1;
  EXPECT_EQ(DecideSchedule(done).mode, Mode::kAllMax);
  ScheduleInputs disjoint = NoProfile();
  disjoint.declared_freqs_mhz = {{1410}, {900}};
  EXPECT_EQ(DecideSchedule(disjoint).mode, Mode::kAllMax);
  ScheduleInputs above = NoProfile();
  above.profiling_min_freq_mhz = 1500;
  EXPECT_EQ(DecideSchedule(above).mode, Mode::kAllMax);
}

TEST(ScheduleDecision, ModeNames) {
  EXPECT_STREQ(ScheduleModeName(Mode::kAllMax), "all_max");
  EXPECT_STREQ(ScheduleModeName(Mode::kProfiling), "profiling");
  EXPECT_STREQ(ScheduleModeName(Mode::kPlan), "plan");
  EXPECT_STREQ(ScheduleModeName(Mode::kError), "error");
}

}  // namespace
}  // namespace wattcut::server
