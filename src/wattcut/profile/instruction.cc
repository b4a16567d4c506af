#include "wattcut/profile/instruction.h"

namespace wattcut {

std::string_view InstructionName(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kForward:
      return "forward";
    case InstructionKind::kBackward:
      return "backward";
    case InstructionKind::kBackwardInput:
      return "backward_input";
    case InstructionKind::kBackwardWeight:
      return "backward_weight";
  }
  return "unknown";
}

std::optional<InstructionKind> ParseInstruction(std::string_view name) {
  for (int k = 0; k < kNumInstructionKinds; ++k) {
    const auto kind = static_cast<InstructionKind>(k);
    if (name == InstructionName(kind)) return kind;
  }
  return std::nullopt;
}

std::string_view InstructionNameList() { return "forward, backward, backward_input or backward_weight"; }

}  // namespace wattcut
