// The in-training client's per-instruction hook: the rank's schedule cursor feeding an
// asynchronous frequency setter. Call OnInstructionBegin before every forward/backward and
// OnStepEnd after the optimizer step; hand new plans from the server to SetNextSchedule from any
// thread (they start at the next step boundary).
#pragma once

#include <string_view>
#include <vector>

#include "wattcut/base/result.h"
#include "wattcut/runtime/frequency_setter.h"
#include "wattcut/runtime/schedule_cursor.h"

namespace wattcut {

class FrequencyPlanRunner {
 public:
  // `setter` must outlive the runner.
  FrequencyPlanRunner(FrequencySetter& setter, std::vector<ScheduleEntry> schedule)
      : setter_(setter), cursor_(std::move(schedule)) {}

  // Takes the next frequency of the plan (failing when `instruction` is not the plan's next one)
  // and hands it to the setter without waiting.
  Status OnInstructionBegin(std::string_view instruction) {
    auto freq_mhz = cursor_.OnInstructionBegin(instruction);
    if (!freq_mhz.ok()) return freq_mhz.error();
    setter_.SetFrequency(*freq_mhz);
    return Status::Ok();
  }
  Status OnStepEnd() { return cursor_.OnStepEnd(); }
  void SetNextSchedule(std::vector<ScheduleEntry> schedule) { cursor_.SetNextSchedule(std::move(schedule)); }
  const ScheduleCursor& cursor() const { return cursor_; }

 private:
  FrequencySetter& setter_;
  ScheduleCursor cursor_;
};

}  // namespace wattcut
