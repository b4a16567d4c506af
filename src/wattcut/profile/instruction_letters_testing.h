// Test support: the instruction kinds in the letters schedules are drawn with (F, B, BI, BW), for
// tests that write profiles and schedules by hand. A test takes them with
// `using namespace wattcut::instruction_letters;`.
#pragma once

#include "wattcut/profile/instruction.h"

namespace wattcut::instruction_letters {

inline constexpr InstructionKind F = InstructionKind::kForward;
inline constexpr InstructionKind B = InstructionKind::kBackward;
inline constexpr InstructionKind BI = InstructionKind::kBackwardInput;
inline constexpr InstructionKind BW = InstructionKind::kBackwardWeight;

}  // namespace wattcut::instruction_letters
