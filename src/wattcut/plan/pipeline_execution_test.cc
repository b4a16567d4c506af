#include "wattcut/plan/pipeline_execution.h"

#include <gtest/gtest.h>

namespace wattcut {
namespace {

TEST(PipelineExecution, TwoStageOneFOneBTimesAndSlack) {
  // S=2, M=1: stage 0 runs F0 B0, stage 1 runs F0 B0. F takes 1 s, B 2 s on stage 0;
  // F 3 s, B 4 s on stage 1. Path: F0(s0) 0-1, F0(s1) 1-4, B0(s1) 4-8, B0(s0) 8-10.
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 2, 1);
  PipelineExecution e = ExecutePipeline(schedule, {{1, 2}, {3, 4}});
  EXPECT_DOUBLE_EQ(e.iteration_time_s, 10);
  EXPECT_DOUBLE_EQ(e.timing[1][0].start_s, 1);
  EXPECT_DOUBLE_EQ(e.timing[1][1].end_s, 8);
  EXPECT_DOUBLE_EQ(e.timing[0][1].start_s, 8);
  EXPECT_DOUBLE_EQ(e.stage_compute_s[0], 3);
  EXPECT_DOUBLE_EQ(e.stage_compute_s[1], 7);
  for (const auto& stage : e.timing) {
    for (const auto& t : stage) EXPECT_DOUBLE_EQ(t.slack_s, 0);  // one chain: all critical
  }
}

TEST(PipelineExecution, OffCriticalComputationsHaveSlack) {
  // S=2, M=2 1F1B. Stage 0: F0 F1 B0 B1; stage 1: F0 B0 F1 B1. Stage 1 is slow, so
  // stage 0's F1 (which only has to precede stage 1's F1) can wait.
  PipelineSchedule schedule = *BuildPipelineSchedule(PipelineScheduleKind::k1F1B, 2, 2);
  PipelineExecution e = ExecutePipeline(schedule, {{1, 1, 1, 1}, {5, 5, 5, 5}});
  // F0(s0) 0-1, F0(s1) 1-6, B0(s1) 6-11, F1(s1) 11-16, B1(s1) 16-21, B1(s0) 21-22.
  EXPECT_DOUBLE_EQ(e.iteration_time_s, 22);
  EXPECT_DOUBLE_EQ(e.timing[0][1].end_s, 2);    // F1 on stage 0 ends at 2 ...
  EXPECT_DOUBLE_EQ(e.timing[0][1].slack_s, 9);  // ... but could end as late as 11
  EXPECT_DOUBLE_EQ(e.timing[1][2].slack_s, 0);
}

}  // namespace
}  // namespace wattcut
