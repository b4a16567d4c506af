#include "wattcut/polca/request_trace_reader.h"

#include <utility>

#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {

Result<RequestTraceReader> RequestTraceReader::Open(const std::string& path) {
  Result<CsvRowReader> rows = CsvRowReader::OpenFile(path, kMaxStreamedTraceFileBytes);
  if (!rows.ok()) return rows.error();
  Result<TraceRowCheck> check = TraceRowCheck::ForHeader(
      rows->table(),
      {kMaxStreamedTraceSpanS, "90 days", "a run follows the trace's timeline and lasts at most 90 days"});
  if (!check.ok()) return check.error();
  return RequestTraceReader(std::move(*rows), std::move(*check));
}

Result<bool> RequestTraceReader::Next(TraceRequest& request) {
  Result<bool> more = rows_.Next(row_);
  if (!more.ok()) return more.error();
  if (!*more) {
    if (check_.rows_checked() == 0) return Error{name() + ": no requests after the header"};
    return false;
  }
  if (check_.rows_checked() == kMaxStreamedTraceRequests) {
    return Error{name() + ":" + std::to_string(row_.line) + ": more than the " +
                 std::to_string(kMaxStreamedTraceRequests) +
                 " requests a streamed trace may hold (90 days at the 2024 Azure traces' rate)"};
  }
  Result<TraceRequest> checked = check_.Check(rows_.table(), row_);
  if (!checked.ok()) return checked.error();
  request = *checked;
  return true;
}

}  // namespace wattcut::polca
