#include "wattcut/profile/instruction.h"

namespace wattcut {

std::string_view InstructionName(InstructionKind kind) {
  return kind == InstructionKind::kForward ? "forward" : "backward";
}

std::optional<InstructionKind> ParseInstruction(std::string_view name) {
  if (name == "forward") return InstructionKind::kForward;
  if (name == "backward") return InstructionKind::kBackward;
  return std::nullopt;
}

}  // namespace wattcut
