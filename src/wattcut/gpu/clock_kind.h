// The two clocks of a GPU that can be locked to a range: its SM (graphics) clock and its memory
// clock. A setter written once for both takes the kind.
#pragma once

#include <string_view>

namespace wattcut {

enum class ClockKind { kSm, kMemory };

// "SM", "memory": as messages name the clock ("cannot lock GPU 0 SM clocks to ...").
constexpr std::string_view ClockKindName(ClockKind kind) { return kind == ClockKind::kSm ? "SM" : "memory"; }

// "sm", "memory": as identifiers spell it (the agent's commands lock_sm, unlock_memory, ...).
constexpr std::string_view ClockKindId(ClockKind kind) { return kind == ClockKind::kSm ? "sm" : "memory"; }

// "sm-clocks", "memory-clocks": the node agent's resource of the clock's lock (PUT and DELETE
// /v1/gpus/N/sm-clocks, docs/agent.md), for the agent's routes and its client alike.
constexpr std::string_view ClockKindResource(ClockKind kind) {
  return kind == ClockKind::kSm ? "sm-clocks" : "memory-clocks";
}

}  // namespace wattcut
