// A streamed trace's own timeline, from one pass over its file (RequestTraceReader): how many
// requests arrive in each hour of it, counted from the first request (hour k is [k h, (k+1) h)
// after it). --time-of-day trace scales the trace's rate by its busiest full hour and runs for
// its span; the pass holds one counter per hour, never the requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::polca {

struct TraceTimeline {
  std::string path;
  std::string start_timestamp;  // the first request's, as written
  double start_utc_s = 0;       // the same in seconds since 1970 UTC
  int64_t requests = 0;
  double span_s = 0;  // from the first to the last request
  std::vector<int64_t> hourly_requests;
  // The same hours' prompt and generated tokens, summed (the work the hour brings: row_load.h).
  std::vector<double> hourly_prompt_tokens;
  std::vector<double> hourly_generated_tokens;

  // Reads `path` through once. Fails on a bad row (FILE:LINE, as RequestTraceReader) and on a
  // trace shorter than an hour (its busiest hour sets the rate).
  static Result<TraceTimeline> Scan(const std::string& path);

  // The full hours (the last, cut short by the end of the trace, does not count unless the span
  // is a whole number of hours).
  size_t full_hours() const;
  // The full hour with the most requests (the first of equals), and its requests.
  size_t busiest_hour() const;
  int64_t busiest_hour_requests() const;
  // The run a trace covers: its span rounded up to a whole second.
  double duration_s() const;
  // Requests arriving before `t_s` after the first, counted by whole hours (an upper bound).
  int64_t RequestsBefore(double t_s) const;
};

}  // namespace wattcut::polca
