#include "wattcut/polca/time_of_day.h"

#include "wattcut/base/printable_text.h"

namespace wattcut::polca {

std::string TimeOfDayName(TimeOfDay mode) { return mode == TimeOfDay::kTrace ? "trace" : "cosine"; }

Result<TimeOfDay> ParseTimeOfDay(const std::string& text) {
  if (text == "cosine") return TimeOfDay::kCosine;
  if (text == "trace") return TimeOfDay::kTrace;
  return Error{
      "--time-of-day: expected cosine (the diurnal envelope over one trace hour) or trace (the trace's own "
      "timeline), got '" +
      PrintableText(text) + "'"};
}

}  // namespace wattcut::polca
