#include "wattcut/dag/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace wattcut {
namespace {

// "F0 F1 B0" -> {{F,0},{F,1},{B,0}}.
std::vector<Computation> Parse(const std::string& text) {
  std::vector<Computation> out;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    Computation c;
    c.kind = token[0] == 'F' ? InstructionKind::kForward : InstructionKind::kBackward;
    c.microbatch = std::stoi(token.substr(1));
    out.push_back(c);
  }
  return out;
}

std::string Format(const std::vector<Computation>& list) {
  std::string out;
  for (const Computation& c : list) {
    if (!out.empty()) out += ' ';
    out += (c.kind == InstructionKind::kForward ? 'F' : 'B') + std::to_string(c.microbatch);
  }
  return out;
}

void ExpectSchedule(PipelineScheduleKind kind, int stages, int microbatches, const std::vector<std::string>& expected) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(kind, stages, microbatches);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  ASSERT_EQ(schedule->size(), expected.size());
  for (size_t s = 0; s < expected.size(); ++s) {
    EXPECT_EQ(Format((*schedule)[s]), expected[s]) << "stage " << s;
    EXPECT_EQ((*schedule)[s], Parse(expected[s])) << "stage " << s;
  }
}

// ---------------------------------------------------------------------------------------
// 1F1B: stage s runs min(S - s, M) forwards, then alternates B/F, then drains.

TEST(PipelineScheduleTest, OneFOneBFourStagesEightMicrobatches) {
  ExpectSchedule(PipelineScheduleKind::k1F1B, 4, 8,
                 {
                     "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7",
                     "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7",
                     "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7",
                     "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7",
                 });
}

TEST(PipelineScheduleTest, OneFOneBFewerMicrobatchesThanStages) {
  ExpectSchedule(PipelineScheduleKind::k1F1B, 4, 2,
                 {
                     "F0 F1 B0 B1",
                     "F0 F1 B0 B1",
                     "F0 F1 B0 B1",
                     "F0 B0 F1 B1",
                 });
  ExpectSchedule(PipelineScheduleKind::k1F1B, 3, 1, {"F0 B0", "F0 B0", "F0 B0"});
}

TEST(PipelineScheduleTest, OneFOneBEqualMicrobatchesAndStages) {
  ExpectSchedule(PipelineScheduleKind::k1F1B, 3, 3,
                 {
                     "F0 F1 F2 B0 B1 B2",
                     "F0 F1 B0 F2 B1 B2",
                     "F0 B0 F1 B1 F2 B2",
                 });
}

TEST(PipelineScheduleTest, OneFOneBSingleStage) {
  ExpectSchedule(PipelineScheduleKind::k1F1B, 1, 4, {"F0 B0 F1 B1 F2 B2 F3 B3"});
  ExpectSchedule(PipelineScheduleKind::k1F1B, 1, 1, {"F0 B0"});
}

// ---------------------------------------------------------------------------------------
// GPipe: all forwards in microbatch order, then all backwards in reverse order.

TEST(PipelineScheduleTest, GPipe) {
  ExpectSchedule(PipelineScheduleKind::kGPipe, 3, 4,
                 {
                     "F0 F1 F2 F3 B3 B2 B1 B0",
                     "F0 F1 F2 F3 B3 B2 B1 B0",
                     "F0 F1 F2 F3 B3 B2 B1 B0",
                 });
  ExpectSchedule(PipelineScheduleKind::kGPipe, 1, 1, {"F0 B0"});
  ExpectSchedule(PipelineScheduleKind::kGPipe, 2, 2, {"F0 F1 B1 B0", "F0 F1 B1 B0"});
}

TEST(PipelineScheduleTest, EveryStageRunsEachComputationOnceForwardBeforeBackward) {
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe}) {
    for (int stages = 1; stages <= 6; ++stages) {
      for (int microbatches = 1; microbatches <= 9; ++microbatches) {
        Result<PipelineSchedule> schedule = BuildPipelineSchedule(kind, stages, microbatches);
        ASSERT_TRUE(schedule.ok()) << schedule.error().message;
        ASSERT_EQ(static_cast<int>(schedule->size()), stages);
        for (const auto& list : *schedule) {
          ASSERT_EQ(static_cast<int>(list.size()), 2 * microbatches);
          std::vector<int> f_pos(static_cast<size_t>(microbatches), -1);
          std::vector<int> b_pos(static_cast<size_t>(microbatches), -1);
          for (size_t i = 0; i < list.size(); ++i) {
            auto& pos = list[i].kind == InstructionKind::kForward ? f_pos : b_pos;
            ASSERT_GE(list[i].microbatch, 0);
            ASSERT_LT(list[i].microbatch, microbatches);
            EXPECT_EQ(pos[static_cast<size_t>(list[i].microbatch)], -1);
            pos[static_cast<size_t>(list[i].microbatch)] = static_cast<int>(i);
          }
          for (int m = 0; m < microbatches; ++m) {
            EXPECT_LT(f_pos[static_cast<size_t>(m)], b_pos[static_cast<size_t>(m)]);
            if (m > 0) {
              EXPECT_LT(f_pos[static_cast<size_t>(m - 1)], f_pos[static_cast<size_t>(m)]);
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Names and errors.

TEST(PipelineScheduleTest, NamesRoundTrip) {
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::k1F1B), "1f1b");
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::kGPipe), "gpipe");
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe}) {
    Result<PipelineScheduleKind> parsed = ParsePipelineSchedule(PipelineScheduleName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
}

TEST(PipelineScheduleTest, RejectsUnknownName) {
  for (const char* bad : {"interleaved", "1F1B", "GPipe", ""}) {
    Result<PipelineScheduleKind> parsed = ParsePipelineSchedule(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().message, "unknown pipeline schedule '" + std::string(bad) + "' (expected 1f1b or gpipe)");
  }
}

TEST(PipelineScheduleTest, RejectsBadSizes) {
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe}) {
    Result<PipelineSchedule> no_stages = BuildPipelineSchedule(kind, 0, 4);
    ASSERT_FALSE(no_stages.ok());
    EXPECT_EQ(no_stages.error().message, "number of stages must be >= 1, got 0");
    Result<PipelineSchedule> negative_stages = BuildPipelineSchedule(kind, -3, 4);
    ASSERT_FALSE(negative_stages.ok());
    EXPECT_EQ(negative_stages.error().message, "number of stages must be >= 1, got -3");
    Result<PipelineSchedule> no_microbatches = BuildPipelineSchedule(kind, 4, 0);
    ASSERT_FALSE(no_microbatches.ok());
    EXPECT_EQ(no_microbatches.error().message, "number of microbatches must be >= 1, got 0");
    Result<PipelineSchedule> negative_microbatches = BuildPipelineSchedule(kind, 4, -1);
    ASSERT_FALSE(negative_microbatches.ok());
    EXPECT_EQ(negative_microbatches.error().message, "number of microbatches must be >= 1, got -1");
  }
}

}  // namespace
}  // namespace wattcut
