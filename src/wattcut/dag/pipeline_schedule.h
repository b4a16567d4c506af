// Pipeline schedules: the order in which each stage runs its forward and backward
// computations over the microbatches of one training iteration.
#pragma once

#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/instruction.h"

namespace wattcut {

enum class PipelineScheduleKind {
  k1F1B,   // synchronous 1F1B (DeepSpeed TrainSchedule, Megatron non-interleaved)
  kGPipe,  // all forwards in microbatch order, then all backwards in reverse order
};

// "1f1b" / "gpipe".
std::string_view PipelineScheduleName(PipelineScheduleKind kind);
Result<PipelineScheduleKind> ParsePipelineSchedule(std::string_view name);

struct Computation {
  InstructionKind kind = InstructionKind::kForward;
  int microbatch = 0;
  bool operator==(const Computation&) const = default;
};

// One list per stage (0-based), in execution order. Each list holds every forward and
// every backward of that stage exactly once: 2 * num_microbatches entries.
using PipelineSchedule = std::vector<std::vector<Computation>>;

// Fails on num_stages < 1 or num_microbatches < 1. The size is the caller's to bound: the
// schedule holds 2 x num_stages x num_microbatches computations, and the planning limits
// (plan/planning_limits.h, CheckPipelineShape) are checked before a schedule is built.
Result<PipelineSchedule> BuildPipelineSchedule(PipelineScheduleKind kind, int num_stages, int num_microbatches);

}  // namespace wattcut
