// A value that changes at given times and holds until the next: an electricity price
// (currency per kWh), a grid's carbon intensity (gCO2/kWh) or a job's power budget (W), read
// from the two-column CSV users convert their grid operator's or datacenter's files to:
//
//   time,price               time: ISO 8601 (2026-12-02T13:00Z, 2026-12-02 13:00:00+01:00)
//   2026-12-02T00:00Z,0.21         or seconds since 1970 UTC, one form in a file;
//   2026-12-02T01:00Z,0.19   the second column's name is the caller's to check
//
// Each row's value holds from its time until the next row's; the last row's holds on. Times must
// increase strictly (an unsorted or repeated time is refused at its line, naming the row it is
// not after), and values must be finite and within the caller's range. Errors are
// "FILE:LINE: column 'NAME': what was expected, got what".
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::deadline {

struct Step {
  double time_s = 0;  // seconds since 1970 UTC
  double value = 0;
  int line = 0;  // in the file, for messages
};

struct StepSeries {
  std::string source;      // the file
  std::string value_name;  // the second column's name
  std::vector<Step> steps;

  // The step in force at `time_s`: the last one whose time is <= time_s; nullptr before the first.
  const Step* At(double time_s) const;
};

struct StepSeriesSpec {
  std::string what;                      // "price", "power budget": for messages
  std::vector<std::string> value_names;  // accepted second-column names; empty: any
  double min_value = 0;                  // inclusive
  bool min_exclusive = false;            // values must be > min_value
};

// The three series a schedule reads. A price may be negative (day-ahead markets clear below zero
// for hours at a time; deadline_scheduler.h says what the schedule does then); a carbon intensity
// may not, and a power budget must be positive.
inline const StepSeriesSpec kPriceSeries{"price", {}, -std::numeric_limits<double>::infinity(), false};
inline const StepSeriesSpec kCarbonSeries{"carbon intensity", {}, 0, false};
inline const StepSeriesSpec kPowerBudgetSeries{"power budget", {"watts", "watts_per_gpu"}, 0, true};

// Reads a step series from `path` (at most 64 MiB, 1,000,000 rows).
Result<StepSeries> ReadStepSeries(const std::string& path, const StepSeriesSpec& spec);
// The same from text in memory; `source` names it in errors.
Result<StepSeries> ParseStepSeries(const std::string& text, const std::string& source, const StepSeriesSpec& spec);

}  // namespace wattcut::deadline
