// The rules of a request trace's rows, written once for RequestTrace (a trace held in memory)
// and RequestTraceReader (one streamed from a file):
//   * the header has the columns TIMESTAMP, ContextTokens and GeneratedTokens (in any order);
//   * a row's TIMESTAMP parses (ParseTimestamp), is not earlier than the row before and not more
//     than the reader's span bound after the first row;
//   * its token counts are positive integers of at most kMaxTokensPerRequest.
// Every failure is "FILE:LINE: column 'NAME': ..." with the value quoted through PrintableText.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/result.h"
#include "wattcut/polca/request_trace.h"

namespace wattcut::polca {

// How far after the first request a reader accepts one, and why, for the message.
struct TraceSpanBound {
  double max_span_s = 0;
  std::string limit;   // the bound in words: "31 days"
  std::string reason;  // why: "a trace is replayed as the shape of every block and should span about an hour"
};

class TraceRowCheck {
 public:
  // The checker for a table's header; fails when a column is missing, or when there is a column
  // other than the three and `other_columns` (a request log's "server").
  static Result<TraceRowCheck> ForHeader(const CsvTable& table, TraceSpanBound bound,
                                         const std::vector<std::string>& other_columns = {});

  // The row's request, its arrival in seconds after the first row's; the first failed rule.
  Result<TraceRequest> Check(const CsvTable& table, const CsvRow& row);

  int64_t rows_checked() const { return rows_checked_; }
  // The first row's timestamp as written, and as seconds since 1970 UTC.
  const std::string& start_timestamp() const { return start_timestamp_; }
  double start_utc_s() const { return first_s_; }

 private:
  TraceSpanBound bound_;
  size_t columns_[3] = {0, 0, 0};  // TIMESTAMP, ContextTokens, GeneratedTokens
  int64_t rows_checked_ = 0;
  std::string start_timestamp_;
  double first_s_ = 0;
  double previous_s_ = 0;
};

}  // namespace wattcut::polca
