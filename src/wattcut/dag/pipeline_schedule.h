// Pipeline schedules: the order in which each pipeline device runs its computations over
// the microbatches of one training iteration.
//
// A device runs one model chunk (1F1B, GPipe, ZB-H1) or V chunks (the interleaved
// schedule, V virtual stages). The profile has one stage per chunk, in model order: with
// P devices and V chunks each, profile stage k = chunk * P + device is the k-th piece of
// the model, so device d holds the pieces d, d + P, d + 2P, ... (Megatron-LM's layout).
#pragma once

#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/profile/instruction.h"

namespace wattcut {

enum class PipelineScheduleKind {
  k1F1B,          // synchronous 1F1B (DeepSpeed TrainSchedule, Megatron non-interleaved)
  kGPipe,         // all forwards in microbatch order, then all backwards in reverse order
  kInterleaved,   // Megatron-LM's interleaved 1F1B over V model chunks per device
  kZeroBubbleH1,  // ZB-H1 (Qi et al., ICLR 2024): 1F1B with each backward split into B and W
};

// "1f1b" / "gpipe" / "interleaved" / "zb-h1".
std::string_view PipelineScheduleName(PipelineScheduleKind kind);
// The names above, and "zbh1" for zb-h1.
Result<PipelineScheduleKind> ParsePipelineSchedule(std::string_view name);
// "1f1b, gpipe, interleaved or zb-h1", for messages and help texts.
std::string_view PipelineScheduleNameList();

// Whether the schedule runs backward_input / backward_weight in place of backward.
bool SplitsBackward(PipelineScheduleKind kind);

struct Computation {
  InstructionKind kind = InstructionKind::kForward;
  int microbatch = 0;
  int chunk = 0;  // which of the device's model chunks (0 unless the schedule is interleaved)
  bool operator==(const Computation&) const = default;
};

// One list per device (0-based), in execution order. Each list holds, for every chunk of
// the device and every microbatch, its forward and its backward (or, split, its
// backward_input and backward_weight) exactly once.
using PipelineSchedule = std::vector<std::vector<Computation>>;

// The profile stage (model piece) of a device's chunk.
inline int ProfileStageOf(int device, int chunk, int num_devices) { return chunk * num_devices + device; }
// The number of chunks per device of a schedule (the largest chunk + 1; 1 for an empty one).
int ScheduleChunks(const PipelineSchedule& schedule);

// The shape checks of BuildPipelineSchedule without building anything, for callers that
// accept a job's settings long before its schedule is built (the planning server).
Status CheckScheduleShape(PipelineScheduleKind kind, int num_devices, int num_microbatches, int virtual_stages);

// Fails on num_devices < 1, num_microbatches < 1, virtual_stages < 1; virtual_stages
// other than 1 for a schedule other than interleaved; for interleaved, virtual_stages < 2
// or num_microbatches not a multiple of num_devices (Megatron-LM's requirement). The size
// is the caller's to bound: the schedule holds 2 (3 when split) x devices x chunks x
// microbatches computations, and the planning limits (plan/planning_limits.h) are checked
// before a schedule is built.
Result<PipelineSchedule> BuildPipelineSchedule(PipelineScheduleKind kind, int num_devices, int num_microbatches,
                                               int virtual_stages = 1);

}  // namespace wattcut
