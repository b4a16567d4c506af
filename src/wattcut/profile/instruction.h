// The two kinds of pipeline computation that a profile measures and a plan schedules.
#pragma once

#include <optional>
#include <string_view>

namespace wattcut {

enum class InstructionKind { kForward = 0, kBackward = 1 };

inline constexpr int kNumInstructionKinds = 2;

// "forward" / "backward": the names used in profile CSVs, plans and the Zeus API.
std::string_view InstructionName(InstructionKind kind);
// Inverse of InstructionName; nullopt for anything else (case-sensitive).
std::optional<InstructionKind> ParseInstruction(std::string_view name);

}  // namespace wattcut
