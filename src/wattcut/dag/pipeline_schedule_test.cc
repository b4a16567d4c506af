#include "wattcut/dag/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "wattcut/dag/schedule_notation.h"

namespace wattcut {
namespace {

// "F0 F1 B0" -> {{F,0},{F,1},{B,0}}; "F3.1" is chunk 1's forward of microbatch 3. With
// `split` (the zero-bubble notation), B is backward_input and W backward_weight.
std::vector<Computation> Parse(const std::string& text, bool split = false) {
  std::vector<Computation> out;
  std::istringstream in(text);
  std::string token;
  while (in >> token) {
    Computation c;
    switch (token[0]) {
      case 'F':
        c.kind = InstructionKind::kForward;
        break;
      case 'B':
        c.kind = split ? InstructionKind::kBackwardInput : InstructionKind::kBackward;
        break;
      default:
        c.kind = InstructionKind::kBackwardWeight;
        break;
    }
    const size_t dot = token.find('.');
    c.microbatch = std::stoi(token.substr(1, dot == std::string::npos ? std::string::npos : dot - 1));
    if (dot != std::string::npos) c.chunk = std::stoi(token.substr(dot + 1));
    out.push_back(c);
  }
  return out;
}

void ExpectSchedule(PipelineScheduleKind kind, int stages, int microbatches, const std::vector<std::string>& expected,
                    int virtual_stages = 1) {
  Result<PipelineSchedule> schedule = BuildPipelineSchedule(kind, stages, microbatches, virtual_stages);
  ASSERT_TRUE(schedule.ok()) << schedule.error().message;
  ASSERT_EQ(schedule->size(), expected.size());
  for (size_t s = 0; s < expected.size(); ++s) {
    EXPECT_EQ(DeviceOrderNotation((*schedule)[s]), expected[s]) << "stage " << s;
    EXPECT_EQ((*schedule)[s], Parse(expected[s], SplitsBackward(kind))) << "stage " << s;
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
// Interleaved 1F1B (Megatron-LM's forward_backward_pipelining_with_interleaving, schedule
// table with microbatch_group_size_per_vp_stage = P): device d runs (P - d - 1) * 2 +
// (V - 1) * P warm-up forwards, then a forward and a backward at a time, then drains.
// Groups of P microbatches go through chunk 0, then chunk 1, ... on the way forward, and
// through chunk V - 1, ..., 0 on the way back. Written out by hand from that definition
// (and checked against Megatron's schedule table: PP4 VP2 M8, the figure of Narayanan et
// al., SC '21, figure 4).

TEST(PipelineScheduleTest, InterleavedFourDevicesTwoChunksEightMicrobatches) {
  ExpectSchedule(PipelineScheduleKind::kInterleaved, 4, 8,
                 {
                     "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1 F4 F5 F6 B0.1 F7 B1.1 F4.1 B2.1 F5.1 B3.1 F6.1 B0 F7.1 B1 "
                     "B2 B3 B4.1 B5.1 B6.1 B7.1 B4 B5 B6 B7",
                     "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1 F4 B0.1 F5 B1.1 F6 B2.1 F7 B3.1 F4.1 B0 F5.1 B1 F6.1 B2 "
                     "F7.1 B3 B4.1 B5.1 B6.1 B7.1 B4 B5 B6 B7",
                     "F0 F1 F2 F3 F0.1 F1.1 F2.1 B0.1 F3.1 B1.1 F4 B2.1 F5 B3.1 F6 B0 F7 B1 F4.1 B2 F5.1 B3 "
                     "F6.1 B4.1 F7.1 B5.1 B6.1 B7.1 B4 B5 B6 B7",
                     "F0 F1 F2 F3 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 F4 B0 F5 B1 F6 B2 F7 B3 F4.1 B4.1 "
                     "F5.1 B5.1 F6.1 B6.1 F7.1 B7.1 B4 B5 B6 B7",
                 },
                 2);
}

TEST(PipelineScheduleTest, InterleavedSmallCases) {
  ExpectSchedule(PipelineScheduleKind::kInterleaved, 2, 4,
                 {
                     "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3",
                     "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3",
                 },
                 2);
  // Warm-up capped at M x V: device 0 runs every forward first.
  ExpectSchedule(PipelineScheduleKind::kInterleaved, 2, 2,
                 {
                     "F0 F1 F0.1 F1.1 F0.2 F1.2 B0.2 B1.2 B0.1 B1.1 B0 B1",
                     "F0 F1 F0.1 F1.1 F0.2 B0.2 F1.2 B1.2 B0.1 B1.1 B0 B1",
                 },
                 3);
  // One device: V - 1 warm-up forwards, then 1F1B over the chunks.
  ExpectSchedule(PipelineScheduleKind::kInterleaved, 1, 2, {"F0 F0.1 B0.1 F1 B0 F1.1 B1.1 B1"}, 2);
}

TEST(PipelineScheduleTest, InterleavedRequirements) {
  Result<PipelineSchedule> not_multiple = BuildPipelineSchedule(PipelineScheduleKind::kInterleaved, 4, 6, 2);
  ASSERT_FALSE(not_multiple.ok());
  EXPECT_EQ(not_multiple.error().message,
            "the interleaved schedule needs the microbatches (6) to be a multiple of the pipeline devices (4), as "
            "Megatron-LM requires");
  Result<PipelineSchedule> one_chunk = BuildPipelineSchedule(PipelineScheduleKind::kInterleaved, 4, 8, 1);
  ASSERT_FALSE(one_chunk.ok());
  EXPECT_EQ(one_chunk.error().message,
            "the interleaved schedule needs at least 2 virtual stages (model chunks per device), got 1; with one "
            "chunk per device use 1f1b");
  for (PipelineScheduleKind kind :
       {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe, PipelineScheduleKind::kZeroBubbleH1}) {
    Result<PipelineSchedule> chunks = BuildPipelineSchedule(kind, 4, 8, 2);
    ASSERT_FALSE(chunks.ok());
    EXPECT_EQ(chunks.error().message,
              "virtual stages (2) need the interleaved schedule, not " + std::string(PipelineScheduleName(kind)));
  }
  Result<PipelineSchedule> zero = BuildPipelineSchedule(PipelineScheduleKind::kInterleaved, 4, 8, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "number of virtual stages must be >= 1, got 0");
}

// ---------------------------------------------------------------------------------------
// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, figure 3 top;
// sail-sg/zero-bubble-pipeline-parallelism, branch zb-h1-quick-start): 1F1B's order with
// B (backward_input) in place of the backward and device d's W (backward_weight) passes
// delayed by d backwards; the tail fills with the delayed W passes. Written out by hand.

TEST(PipelineScheduleTest, ZeroBubbleH1FourStagesEightMicrobatches) {
  ExpectSchedule(PipelineScheduleKind::kZeroBubbleH1, 4, 8,
                 {
                     "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7",
                     "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7",
                     "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7",
                     "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7",
                 });
}

TEST(PipelineScheduleTest, ZeroBubbleH1SmallCases) {
  ExpectSchedule(PipelineScheduleKind::kZeroBubbleH1, 4, 2,
                 {
                     "F0 F1 B0 W0 B1 W1",
                     "F0 F1 B0 B1 W0 W1",
                     "F0 F1 B0 B1 W0 W1",
                     "F0 B0 F1 B1 W0 W1",
                 });
  ExpectSchedule(PipelineScheduleKind::kZeroBubbleH1, 3, 5,
                 {
                     "F0 F1 F2 B0 W0 F3 B1 W1 F4 B2 W2 B3 W3 B4 W4",
                     "F0 F1 B0 F2 B1 W0 F3 B2 W1 F4 B3 W2 B4 W3 W4",
                     "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 F4 B4 W2 W3 W4",
                 });
  ExpectSchedule(PipelineScheduleKind::kZeroBubbleH1, 1, 2, {"F0 B0 W0 F1 B1 W1"});
}

// Each device's in-flight microbatches (forward run, W not yet run) never exceed P, the
// most that 1F1B's first device holds: ZB-H1 keeps 1F1B's activation memory.
TEST(PipelineScheduleTest, ZeroBubbleH1KeepsOneFOneBActivationMemory) {
  for (int stages = 1; stages <= 6; ++stages) {
    for (int microbatches = 1; microbatches <= 10; ++microbatches) {
      Result<PipelineSchedule> schedule =
          BuildPipelineSchedule(PipelineScheduleKind::kZeroBubbleH1, stages, microbatches);
      ASSERT_TRUE(schedule.ok()) << schedule.error().message;
      for (const auto& list : *schedule) {
        ASSERT_EQ(static_cast<int>(list.size()), 3 * microbatches);
        int in_flight = 0, peak = 0;
        for (const Computation& c : list) {
          if (c.kind == InstructionKind::kForward) ++in_flight;
          if (c.kind == InstructionKind::kBackwardWeight) --in_flight;
          peak = std::max(peak, in_flight);
        }
        EXPECT_LE(peak, std::min(stages, microbatches)) << stages << " x " << microbatches;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Names and errors.

TEST(PipelineScheduleTest, Notation) {
  EXPECT_EQ(ComputationNotation({InstructionKind::kForward, 3, 0}), "F3");
  EXPECT_EQ(ComputationNotation({InstructionKind::kBackward, 0, 1}), "B0.1");
  EXPECT_EQ(ComputationNotation({InstructionKind::kBackwardInput, 12, 0}), "B12");
  EXPECT_EQ(ComputationNotation({InstructionKind::kBackwardWeight, 2, 3}), "W2.3");
  EXPECT_EQ(DeviceOrderNotation({{InstructionKind::kForward, 0, 0}, {InstructionKind::kBackward, 0, 0}}), "F0 B0");
  EXPECT_EQ(DeviceOrderNotation({}), "");
}

TEST(PipelineScheduleTest, NamesRoundTrip) {
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::k1F1B), "1f1b");
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::kGPipe), "gpipe");
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::kInterleaved), "interleaved");
  EXPECT_EQ(PipelineScheduleName(PipelineScheduleKind::kZeroBubbleH1), "zb-h1");
  Result<PipelineScheduleKind> alias = ParsePipelineSchedule("zbh1");
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(*alias, PipelineScheduleKind::kZeroBubbleH1);
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe,
                                    PipelineScheduleKind::kInterleaved, PipelineScheduleKind::kZeroBubbleH1}) {
    Result<PipelineScheduleKind> parsed = ParsePipelineSchedule(PipelineScheduleName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
}

TEST(PipelineScheduleTest, RejectsUnknownName) {
  for (const char* bad : {"interleaved-1f1b", "1F1B", "GPipe", "zb", ""}) {
    Result<PipelineScheduleKind> parsed = ParsePipelineSchedule(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().message,
              "unknown pipeline schedule '" + std::string(bad) + "' (expected 1f1b, gpipe, interleaved or zb-h1)");
  }
}

TEST(PipelineScheduleTest, RejectsBadSizes) {
  for (PipelineScheduleKind kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe,
                                    PipelineScheduleKind::kInterleaved, PipelineScheduleKind::kZeroBubbleH1}) {
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
