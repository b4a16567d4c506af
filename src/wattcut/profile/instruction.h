// The kinds of pipeline computation that a profile measures and a plan schedules.
#pragma once

#include <optional>
#include <string_view>

namespace wattcut {

// kForward and kBackward are what 1F1B, GPipe and the interleaved schedule run. The
// zero-bubble schedules split a backward into its input-gradient part (kBackwardInput,
// "B" in the zero-bubble paper) and its weight-gradient part (kBackwardWeight, "W").
enum class InstructionKind { kForward = 0, kBackward = 1, kBackwardInput = 2, kBackwardWeight = 3 };

inline constexpr int kNumInstructionKinds = 4;

// "forward" / "backward" / "backward_input" / "backward_weight": the names used in
// profile CSVs, plans, the Zeus API and the runtime.
std::string_view InstructionName(InstructionKind kind);
// Inverse of InstructionName; nullopt for anything else (case-sensitive).
std::optional<InstructionKind> ParseInstruction(std::string_view name);
// "forward, backward, backward_input or backward_weight", for messages.
std::string_view InstructionNameList();

// Whether a computation of this kind is a (whole or partial) backward.
inline bool IsBackwardKind(InstructionKind kind) { return kind != InstructionKind::kForward; }

}  // namespace wattcut
