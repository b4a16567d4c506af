#include "wattcut/dag/pipeline_schedule.h"

#include <algorithm>
#include <string>

namespace wattcut {

namespace {

constexpr auto F = InstructionKind::kForward;
constexpr auto B = InstructionKind::kBackward;
constexpr auto BI = InstructionKind::kBackwardInput;
constexpr auto BW = InstructionKind::kBackwardWeight;

// 1F1B on device d of P: min(P - d, M) forwards, then alternate B/F, then drain the backwards.
void OneFOneB(int d, int P, int M, std::vector<Computation>& list) {
  const int warmup = std::min(P - d, M);
  int next_f = 0, next_b = 0;
  for (; next_f < warmup; ++next_f) list.push_back({F, next_f});
  while (next_f < M) {
    list.push_back({B, next_b++});
    list.push_back({F, next_f++});
  }
  while (next_b < M) list.push_back({B, next_b++});
}

// Megatron-LM's forward_backward_pipelining_with_interleaving on device d of P, V chunks:
// (P - d - 1) * 2 + (V - 1) * P warm-up forwards (at most M * V), then one forward and one
// backward at a time, then the remaining backwards. The k-th forward runs chunk
// (k / P) % V, the k-th backward chunk V - 1 - (k / P) % V, both on microbatch
// (k / (P * V)) * P + k % P: groups of P microbatches go through every chunk in turn
// (Megatron's schedule table with microbatch_group_size_per_vp_stage = P).
void Interleaved(int d, int P, int V, int M, std::vector<Computation>& list) {
  const int total = M * V;
  const int warmup = std::min((P - d - 1) * 2 + (V - 1) * P, total);
  auto microbatch = [&](int k) { return (k / (P * V)) * P + k % P; };
  auto forward = [&](int k) { list.push_back({F, microbatch(k), (k / P) % V}); };
  auto backward = [&](int k) { list.push_back({B, microbatch(k), V - 1 - (k / P) % V}); };
  for (int k = 0; k < warmup; ++k) forward(k);
  for (int k = 0; k < total - warmup; ++k) {
    forward(k + warmup);
    backward(k);
  }
  for (int k = total - warmup; k < total; ++k) backward(k);
}

// ZB-H1 on device d of P: Megatron's 1F1B order (P - d - 1 warm-up forwards, then a
// forward and a backward at a time, then the remaining backwards) with every backward
// split into B (backward_input) and W (backward_weight), and device d's W passes delayed
// by d backwards: W(m) follows B(m + d), and the last d W passes fill the tail. Every
// device then holds the activations of P microbatches at most, as 1F1B's first device
// does (sail-sg/zero-bubble-pipeline-parallelism, "delay W by rank").
void ZeroBubbleH1(int d, int P, int M, std::vector<Computation>& list) {
  const int warmup = std::min(P - d - 1, M);
  int next_w = 0;
  auto backward = [&](int m) {
    list.push_back({BI, m});
    if (m >= d) list.push_back({BW, next_w++});
  };
  for (int m = 0; m < warmup; ++m) list.push_back({F, m});
  for (int i = 0; i < M - warmup; ++i) {
    list.push_back({F, warmup + i});
    backward(i);
  }
  for (int m = M - warmup; m < M; ++m) backward(m);
  while (next_w < M) list.push_back({BW, next_w++});
}

}  // namespace

std::string_view PipelineScheduleName(PipelineScheduleKind kind) {
  switch (kind) {
    case PipelineScheduleKind::k1F1B:
      return "1f1b";
    case PipelineScheduleKind::kGPipe:
      return "gpipe";
    case PipelineScheduleKind::kInterleaved:
      return "interleaved";
    case PipelineScheduleKind::kZeroBubbleH1:
      return "zb-h1";
  }
  return "unknown";
}

std::string_view PipelineScheduleNameList() { return "1f1b, gpipe, interleaved or zb-h1"; }

Result<PipelineScheduleKind> ParsePipelineSchedule(std::string_view name) {
  for (auto kind : {PipelineScheduleKind::k1F1B, PipelineScheduleKind::kGPipe, PipelineScheduleKind::kInterleaved,
                    PipelineScheduleKind::kZeroBubbleH1}) {
    if (name == PipelineScheduleName(kind)) return kind;
  }
  if (name == "zbh1") return PipelineScheduleKind::kZeroBubbleH1;
  return Error{"unknown pipeline schedule '" + std::string(name) + "' (expected " +
               std::string(PipelineScheduleNameList()) + ")"};
}

bool SplitsBackward(PipelineScheduleKind kind) { return kind == PipelineScheduleKind::kZeroBubbleH1; }

int ScheduleChunks(const PipelineSchedule& schedule) {
  int chunks = 1;
  for (const auto& list : schedule) {
    for (const Computation& c : list) chunks = std::max(chunks, c.chunk + 1);
  }
  return chunks;
}

Status CheckScheduleShape(PipelineScheduleKind kind, int num_devices, int num_microbatches, int virtual_stages) {
  if (num_devices < 1) return Error{"number of stages must be >= 1, got " + std::to_string(num_devices)};
  if (num_microbatches < 1) {
    return Error{"number of microbatches must be >= 1, got " + std::to_string(num_microbatches)};
  }
  if (virtual_stages < 1) {
    return Error{"number of virtual stages must be >= 1, got " + std::to_string(virtual_stages)};
  }
  if (kind != PipelineScheduleKind::kInterleaved && virtual_stages != 1) {
    return Error{"virtual stages (" + std::to_string(virtual_stages) + ") need the interleaved schedule, not " +
                 std::string(PipelineScheduleName(kind))};
  }
  if (kind == PipelineScheduleKind::kInterleaved) {
    if (virtual_stages < 2) {
      return Error{"the interleaved schedule needs at least 2 virtual stages (model chunks per device), got " +
                   std::to_string(virtual_stages) + "; with one chunk per device use 1f1b"};
    }
    if (num_microbatches % num_devices != 0) {
      return Error{"the interleaved schedule needs the microbatches (" + std::to_string(num_microbatches) +
                   ") to be a multiple of the pipeline devices (" + std::to_string(num_devices) +
                   "), as Megatron-LM requires"};
    }
  }
  return Status::Ok();
}

Result<PipelineSchedule> BuildPipelineSchedule(PipelineScheduleKind kind, int num_devices, int num_microbatches,
                                               int virtual_stages) {
  if (Status s = CheckScheduleShape(kind, num_devices, num_microbatches, virtual_stages); !s.ok()) return s.error();
  PipelineSchedule schedule(static_cast<size_t>(num_devices));
  const int per_device = (SplitsBackward(kind) ? 3 : 2) * virtual_stages * num_microbatches;
  for (int d = 0; d < num_devices; ++d) {
    auto& list = schedule[static_cast<size_t>(d)];
    list.reserve(static_cast<size_t>(per_device));
    switch (kind) {
      case PipelineScheduleKind::kGPipe:
        for (int m = 0; m < num_microbatches; ++m) list.push_back({F, m});
        for (int m = num_microbatches - 1; m >= 0; --m) list.push_back({B, m});
        break;
      case PipelineScheduleKind::k1F1B:
        OneFOneB(d, num_devices, num_microbatches, list);
        break;
      case PipelineScheduleKind::kInterleaved:
        Interleaved(d, num_devices, virtual_stages, num_microbatches, list);
        break;
      case PipelineScheduleKind::kZeroBubbleH1:
        ZeroBubbleH1(d, num_devices, num_microbatches, list);
        break;
    }
  }
  return schedule;
}

}  // namespace wattcut
