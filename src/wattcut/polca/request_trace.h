// A request trace in the Azure LLM inference trace format (2023): one row per request,
//
//   TIMESTAMP,ContextTokens,GeneratedTokens
//   2023-11-16 18:15:46.6805900,374,44
//
// TIMESTAMP is "YYYY-MM-DD HH:MM:SS[.fraction]" (UTC, up to 9 fractional digits), optionally
// followed by a UTC offset, as the 2024 traces write it: "2024-05-10 00:00:00.009930+00:00"
// ("Z", "+HH:MM" or "-HH:MM"; a time with an offset is converted to UTC).
// Reading checks every row and fails on the first bad one with FILE:LINE: column:
// an unparsable timestamp, tokens that are not positive integers (at most 10 million),
// a timestamp earlier than the row before it (the trace must be sorted by arrival) or
// more than kMaxTraceSpanS after the first. The file's size and request count are
// bounded too (row_limits.h); values quoted in messages go through PrintableText.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/iso_time.h"
#include "wattcut/base/result.h"

namespace wattcut {
class CsvRowReader;
}

namespace wattcut::polca {

struct TraceRequest {
  double arrival_s = 0;  // seconds after the first request of the trace
  int32_t context_tokens = 0;
  int32_t generated_tokens = 0;
};

class RequestTrace {
 public:
  static Result<RequestTrace> Read(const std::string& path);
  // Same, from CSV text; `source_name` stands for the file in messages.
  static Result<RequestTrace> Parse(const std::string& text, const std::string& source_name);
  // From requests already in memory (sorted by arrival, first at 0 s); checked alike.
  static Result<RequestTrace> FromRequests(std::vector<TraceRequest> requests, std::string name);

  const std::string& name() const { return name_; }
  const std::vector<TraceRequest>& requests() const { return requests_; }
  // Time from the first to the last arrival (0 for a one-request trace).
  double span_s() const { return requests_.empty() ? 0 : requests_.back().arrival_s; }
  // The first request's wall-clock time as written in the file.
  const std::string& start_timestamp() const { return start_timestamp_; }

 private:
  static Result<RequestTrace> FromRows(CsvRowReader& rows);

  std::string name_;
  std::string start_timestamp_;
  std::vector<TraceRequest> requests_;
};

// base/iso_time.h; named here for polca's callers.
using wattcut::FormatTimestamp;
using wattcut::ParseTimestamp;

}  // namespace wattcut::polca
