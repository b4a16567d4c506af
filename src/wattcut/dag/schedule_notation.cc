#include "wattcut/dag/schedule_notation.h"

namespace wattcut {

std::string ComputationNotation(const Computation& computation) {
  std::string out(1, computation.kind == InstructionKind::kForward          ? 'F'
                     : computation.kind == InstructionKind::kBackwardWeight ? 'W'
                                                                            : 'B');
  out += std::to_string(computation.microbatch);
  if (computation.chunk != 0) out += '.' + std::to_string(computation.chunk);
  return out;
}

std::string DeviceOrderNotation(const std::vector<Computation>& order) {
  std::string out;
  for (const Computation& c : order) {
    if (!out.empty()) out += ' ';
    out += ComputationNotation(c);
  }
  return out;
}

}  // namespace wattcut
