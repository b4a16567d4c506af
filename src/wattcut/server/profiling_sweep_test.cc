#include "wattcut/server/profiling_sweep.h"

#include <gtest/gtest.h>

namespace wattcut::server {
namespace {

TEST(ProfilingSweep, SweepsTheFrequenciesEveryRankDeclaredHighestFirst) {
  EXPECT_EQ(ProfilingSweep::SweepFrequencies({{1410, 1200, 900}, {1410, 900, 600}}, 0), (std::vector<int>{1410, 900}));
  EXPECT_EQ(ProfilingSweep::SweepFrequencies({{1410, 1200, 900}, {1410, 1200, 900}}, 1000),
            (std::vector<int>{1410, 1200}));
  EXPECT_TRUE(ProfilingSweep::SweepFrequencies({{1410}, {900}}, 0).empty());
  EXPECT_TRUE(ProfilingSweep::SweepFrequencies({}, 0).empty());
}

TEST(ProfilingSweep, AStepEndsWhenEveryRankReported) {
  ProfilingSweep sweep(2);
  EXPECT_FALSE(sweep.current_freq_mhz());
  EXPECT_FALSE(sweep.Record(0));  // nothing to record before the start
  sweep.Start({1410, 900});
  EXPECT_EQ(sweep.current_freq_mhz(), 1410);
  EXPECT_FALSE(sweep.Record(1));
  EXPECT_TRUE(sweep.has_reported(1));
  EXPECT_FALSE(sweep.Record(1));  // twice counts once
  EXPECT_TRUE(sweep.Record(0));
  EXPECT_EQ(sweep.current_freq_mhz(), 900);
  EXPECT_FALSE(sweep.has_reported(0));
  EXPECT_FALSE(sweep.Record(0));
  EXPECT_TRUE(sweep.Record(1));
  EXPECT_TRUE(sweep.done());
  EXPECT_FALSE(sweep.current_freq_mhz());
}

TEST(ProfilingSweep, ResumesFromItsStoredState) {
  ProfilingSweep::State state;
  state.active = true;
  state.freqs_mhz = {1410, 900};
  state.step = 1;
  state.got = {1, 0, 0, 1, 1};  // stored for 3 ranks plus entries beyond: ignored
  ProfilingSweep sweep(state, 3);
  EXPECT_EQ(sweep.state().got.size(), 3u);
  EXPECT_EQ(sweep.current_freq_mhz(), 900);
  EXPECT_FALSE(sweep.Record(1));
  EXPECT_TRUE(sweep.Record(2));
  EXPECT_TRUE(sweep.done());
}

TEST(ProfilingSweep, TheMeanOfEachBreakdown) {
  ProfilingResult result;
  result.rank = 3;
  result.time_breakdown = {{"forward", {{1, 2}, {3}}}, {"backward", {{4}}}};
  result.energy_breakdown = {{"forward", {{10}}}, {"backward", {{20, 40}}}};
  auto m = ProfilingSweep::MeasurementOf(result, 1410);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->forward_time_s, 2);
  EXPECT_DOUBLE_EQ(m->backward_time_s, 4);
  EXPECT_DOUBLE_EQ(m->forward_energy_j, 10);
  EXPECT_DOUBLE_EQ(m->backward_energy_j, 30);
  result.energy_breakdown["backward"] = {{}};
  auto missing = ProfilingSweep::MeasurementOf(result, 1410);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "rank 3: this round profiles 1410 MHz; time_breakdown and energy_breakdown need non-empty 'forward' and "
            "'backward' (or 'backward_input' and 'backward_weight') lists");
  EXPECT_EQ(missing.error().code, ErrorCode::kInvalidArgument);
}

// A zero-bubble schedule's rank runs B and W passes: one backward is one of each.
TEST(ProfilingSweep, ASplitBackwardIsTheSumOfItsPasses) {
  ProfilingResult result;
  result.time_breakdown = {{"forward", {{1}}}, {"backward_input", {{3, 5}}}, {"backward_weight", {{1}}}};
  result.energy_breakdown = {{"forward", {{10}}}, {"backward_input", {{30}}}, {"backward_weight", {{12, 8}}}};
  auto m = ProfilingSweep::MeasurementOf(result, 1410);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_DOUBLE_EQ(m->backward_time_s, 4 + 1);
  EXPECT_DOUBLE_EQ(m->backward_energy_j, 30 + 10);
  result.time_breakdown.erase("backward_weight");
  EXPECT_FALSE(ProfilingSweep::MeasurementOf(result, 1410).ok());
}

// The B and W means are kept too, and written into the rank profile as measured.
TEST(ProfilingSweep, ASplitBackwardKeepsBothPasses) {
  ProfilingResult result;
  result.time_breakdown = {{"forward", {{1}}}, {"backward_input", {{2, 2}}}, {"backward_weight", {{3}}}};
  result.energy_breakdown = {{"forward", {{10}}}, {"backward_input", {{20}}}, {"backward_weight", {{30, 30}}}};
  auto m = ProfilingSweep::MeasurementOf(result, 1410);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->split);
  EXPECT_DOUBLE_EQ(m->split->input_time_s, 2);
  EXPECT_DOUBLE_EQ(m->split->weight_time_s, 3);
  EXPECT_DOUBLE_EQ(m->split->input_energy_j, 20);
  EXPECT_DOUBLE_EQ(m->split->weight_energy_j, 30);
  EXPECT_FALSE(m->measured_whole_backward);
  RankProfile profile;
  m->RecordInto(profile, 1410);
  EXPECT_EQ(profile.forward_time.at(1410), 1);
  EXPECT_TRUE(profile.backward_time.empty()) << "only the split was measured";
  EXPECT_EQ(profile.backward_input_time.at(1410), 2);
  EXPECT_EQ(profile.backward_input_energy.at(1410), 20);
  EXPECT_EQ(profile.backward_weight_time.at(1410), 3);
  EXPECT_EQ(profile.backward_weight_energy.at(1410), 30);

  // A rank of a 1F1B schedule: no split.
  ProfilingResult whole;
  whole.time_breakdown = {{"forward", {{1}}}, {"backward", {{2}}}};
  whole.energy_breakdown = {{"forward", {{10}}}, {"backward", {{20}}}};
  auto w = ProfilingSweep::MeasurementOf(whole, 900);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_FALSE(w->split);
  w->RecordInto(profile, 900);
  EXPECT_EQ(profile.backward_time.at(900), 2);
  EXPECT_FALSE(profile.backward_input_time.count(900));
}

TEST(ProfilingSweep, ZeusDefaultResultHasNoBreakdowns) {
  ProfilingResult zeus_default;  // time_breakdown = {}, energy_breakdown = {}
  zeus_default.iter_time = {1.5};
  zeus_default.iter_energy = {300};
  EXPECT_FALSE(ProfilingSweep::HasBreakdowns(zeus_default));
  ProfilingResult forward_only = zeus_default;
  forward_only.time_breakdown = {{"forward", {{0.1}}}};
  EXPECT_TRUE(ProfilingSweep::HasBreakdowns(forward_only));
  ProfilingResult energy_only = zeus_default;
  energy_only.energy_breakdown = {{"backward", {}}};
  EXPECT_TRUE(ProfilingSweep::HasBreakdowns(energy_only));
}

}  // namespace
}  // namespace wattcut::server
