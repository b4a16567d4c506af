// A request trace read one request at a time from its file, never held whole: the Azure 2024
// week-long traces (17 million requests, about 600 MB each, with timestamps such as
// "2024-05-10 00:00:00.009930+00:00") are read in the memory of one 1 MiB chunk (CsvRowReader).
// Rows are checked by the rules RequestTrace checks (TraceRowCheck, same messages), under the
// streamed bounds of row_limits.h: the file at most kMaxStreamedTraceFileBytes, at most
// kMaxStreamedTraceRequests requests spanning at most kMaxStreamedTraceSpanS.
#pragma once

#include <cstdint>
#include <string>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/result.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/trace_row_check.h"

namespace wattcut::polca {

class RequestTraceReader {
 public:
  // Opens the file and checks its header.
  static Result<RequestTraceReader> Open(const std::string& path);

  const std::string& name() const { return rows_.table().source_name(); }
  // Replaces `request` with the next one (its arrival in seconds after the first request's);
  // false after the last. Fails on the first bad row with FILE:LINE, and on a file without a
  // request ("no requests after the header").
  Result<bool> Next(TraceRequest& request);

  int64_t requests_read() const { return check_.rows_checked(); }
  // The first request's timestamp as written and in seconds since 1970 UTC (once one is read).
  const std::string& start_timestamp() const { return check_.start_timestamp(); }
  double start_utc_s() const { return check_.start_utc_s(); }

 private:
  RequestTraceReader(CsvRowReader rows, TraceRowCheck check) : rows_(std::move(rows)), check_(std::move(check)) {}

  CsvRowReader rows_;
  TraceRowCheck check_;
  CsvRow row_;
};

}  // namespace wattcut::polca
