#include "wattcut/dag/pipeline_schedule.h"

#include <algorithm>
#include <string>

namespace wattcut {

std::string_view PipelineScheduleName(PipelineScheduleKind kind) {
  return kind == PipelineScheduleKind::k1F1B ? "1f1b" : "gpipe";
}

Result<PipelineScheduleKind> ParsePipelineSchedule(std::string_view name) {
  if (name == "1f1b") return PipelineScheduleKind::k1F1B;
  if (name == "gpipe") return PipelineScheduleKind::kGPipe;
  return Error{"unknown pipeline schedule '" + std::string(name) + "' (expected 1f1b or gpipe)"};
}

Result<PipelineSchedule> BuildPipelineSchedule(PipelineScheduleKind kind, int num_stages, int num_microbatches) {
  if (num_stages < 1) return Error{"number of stages must be >= 1, got " + std::to_string(num_stages)};
  if (num_microbatches < 1) {
    return Error{"number of microbatches must be >= 1, got " + std::to_string(num_microbatches)};
  }
  const auto F = InstructionKind::kForward;
  const auto B = InstructionKind::kBackward;
  PipelineSchedule schedule(static_cast<size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) {
    auto& list = schedule[static_cast<size_t>(s)];
    list.reserve(static_cast<size_t>(2 * num_microbatches));
    if (kind == PipelineScheduleKind::kGPipe) {
      for (int m = 0; m < num_microbatches; ++m) list.push_back({F, m});
      for (int m = num_microbatches - 1; m >= 0; --m) list.push_back({B, m});
      continue;
    }
    // 1F1B: min(S - s, M) forwards, then alternate B/F, then drain the backwards.
    const int warmup = std::min(num_stages - s, num_microbatches);
    int next_f = 0, next_b = 0;
    for (; next_f < warmup; ++next_f) list.push_back({F, next_f});
    while (next_f < num_microbatches) {
      list.push_back({B, next_b++});
      list.push_back({F, next_f++});
    }
    while (next_b < num_microbatches) list.push_back({B, next_b++});
  }
  return schedule;
}

}  // namespace wattcut
