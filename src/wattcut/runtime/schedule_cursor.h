// The per-rank frequency schedule of one training iteration and a cursor over it, as the
// in-training client uses it: before each instruction, OnInstructionBegin(name) checks the name
// against the plan and returns the frequency to set; at the end of the step, OnStepEnd() checks
// that the plan was consumed exactly. A new plan (from the server) handed over with
// SetNextSchedule takes effect at the next step boundary, never in the middle of an iteration.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut {

struct ScheduleEntry {
  std::string instruction;  // "forward", "backward", ...
  int freq_mhz = 0;
  bool operator==(const ScheduleEntry&) const = default;
};

struct RankSchedule {
  int rank = 0;
  std::vector<ScheduleEntry> entries;  // one iteration, in execution order
};

// Parses the Zeus server's schedule reply: {"rank": N, "frequencies": [["forward", 1410], ...]}.
// Fails on malformed JSON, a missing or mistyped field, a non-positive frequency, an empty list,
// or (when expected_rank >= 0) a different rank.
Result<RankSchedule> ParseRankScheduleJson(std::string_view json, int expected_rank = -1);

class ScheduleCursor {
 public:
  explicit ScheduleCursor(std::vector<ScheduleEntry> schedule);

  // The frequency for the next instruction, which must be `instruction`. Fails (and does not
  // move) when the name differs from the plan's or the plan is already consumed.
  Result<int> OnInstructionBegin(std::string_view instruction);
  // Ends the step: fails when the plan was not consumed exactly (the cursor restarts either way);
  // then a pending new schedule, if any, takes over.
  Status OnStepEnd();
  // Thread-safe (the server client's thread): the schedule for the steps after the current one.
  void SetNextSchedule(std::vector<ScheduleEntry> schedule);
  // At a step boundary (nothing of the step consumed yet), takes a pending schedule now, so that
  // schedule() shows the step's plan before its first instruction. Elsewhere it does nothing.
  void BeginStep() {
    if (position_ == 0) TakePending();
  }

  size_t position() const { return position_; }
  const std::vector<ScheduleEntry>& schedule() const { return schedule_; }
  uint64_t steps_completed() const { return steps_; }

 private:
  void TakePending();

  std::vector<ScheduleEntry> schedule_;
  size_t position_ = 0;
  uint64_t steps_ = 0;
  std::atomic<bool> has_pending_{false};
  std::mutex pending_mutex_;
  std::optional<std::vector<ScheduleEntry>> pending_;
};

}  // namespace wattcut
