// Where a run's time of day comes from (--time-of-day): the diurnal cosine envelope stretched over
// one trace hour (cosine, ArrivalExpansion; docs/polca.md assumption 1), or a long trace's own
// days and week (trace, TraceTimeArrivals).
#pragma once

#include <string>

#include "wattcut/base/result.h"

namespace wattcut::polca {

enum class TimeOfDay { kCosine, kTrace };

std::string TimeOfDayName(TimeOfDay mode);  // "cosine", "trace"
Result<TimeOfDay> ParseTimeOfDay(const std::string& text);

}  // namespace wattcut::polca
