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
  // `frequency_setter` must outlive the runner.
  FrequencyPlanRunner(FrequencySetter& frequency_setter, std::vector<ScheduleEntry> schedule)
      : setter_(frequency_setter), cursor_(std::move(schedule)) {}

  // Takes the next frequency of the plan (failing when `instruction` is not the plan's next one),
  // hands it to the setter without waiting and returns it.
  Result<int> OnInstructionBegin(std::string_view instruction) {
    auto freq_mhz = cursor_.OnInstructionBegin(instruction);
    if (!freq_mhz.ok()) return freq_mhz.error();
    setter_.SetFrequency(*freq_mhz);
    return *freq_mhz;
  }
  Status OnStepEnd() { return cursor_.OnStepEnd(); }
  void SetNextSchedule(std::vector<ScheduleEntry> schedule) { cursor_.SetNextSchedule(std::move(schedule)); }
  // See ScheduleCursor::BeginStep.
  void BeginStep() { cursor_.BeginStep(); }
  const ScheduleCursor& cursor() const { return cursor_; }

 private:
  FrequencySetter& setter_;
  ScheduleCursor cursor_;
};

}  // namespace wattcut
