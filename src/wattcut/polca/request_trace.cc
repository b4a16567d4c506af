#include "wattcut/polca/request_trace.h"

#include <utility>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/trace_row_check.h"

namespace wattcut::polca {

Result<RequestTrace> RequestTrace::Read(const std::string& path) {
  // One chunk and one row at a time: only the requests are held (16 bytes each). A table of
  // every row held about 260 bytes a row, 2.6 GB for a 10-million-row week.
  Result<CsvRowReader> rows = CsvRowReader::OpenFile(path, kMaxTraceFileBytes);
  if (!rows.ok()) return rows.error();
  return FromRows(*rows);
}

Result<RequestTrace> RequestTrace::Parse(const std::string& text, const std::string& source_name) {
  Result<CsvRowReader> rows = CsvRowReader::FromText(text, source_name);
  if (!rows.ok()) return rows.error();
  return FromRows(*rows);
}

Result<RequestTrace> RequestTrace::FromRows(CsvRowReader& rows) {
  const CsvTable& t = rows.table();
  RequestTrace trace;
  trace.name_ = t.source_name();
  Result<TraceRowCheck> check = TraceRowCheck::ForHeader(
      t, {kMaxTraceSpanS, "31 days", "a trace is replayed as the shape of every block and should span about an hour"});
  if (!check.ok()) return check.error();
  CsvRow row;
  for (;;) {
    Result<bool> more = rows.Next(row);
    if (!more.ok()) return more.error();
    if (!*more) break;
    if (trace.requests_.size() >= static_cast<size_t>(kMaxTraceRequests)) {
      return Error{t.source_name() + ": more than the " + std::to_string(kMaxTraceRequests) +
                   " requests a trace may hold (the expansion replays it as every block; --time-of-day trace "
                   "streams a longer one)"};
    }
    Result<TraceRequest> request = check->Check(t, row);
    if (!request.ok()) return request.error();
    trace.requests_.push_back(*request);
  }
  if (trace.requests_.empty()) return Error{t.source_name() + ": no requests after the header"};
  trace.requests_.shrink_to_fit();
  trace.start_timestamp_ = check->start_timestamp();
  return trace;
}

Result<RequestTrace> RequestTrace::FromRequests(std::vector<TraceRequest> requests, std::string name) {
  if (requests.empty()) return Error{name + ": no requests"};
  if (requests.size() > static_cast<size_t>(kMaxTraceRequests)) {
    return Error{name + ": " + std::to_string(requests.size()) + " requests, more than the " +
                 std::to_string(kMaxTraceRequests) + " a trace may hold"};
  }
  if (requests.back().arrival_s > kMaxTraceSpanS) {
    return Error{name + ": the requests span more than 31 days"};
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    const TraceRequest& r = requests[i];
    if (r.context_tokens < 1 || r.generated_tokens < 1) {
      return Error{name + ": request " + std::to_string(i) + ": token counts must be positive"};
    }
    if (r.arrival_s < 0 || (i > 0 && r.arrival_s < requests[i - 1].arrival_s)) {
      return Error{name + ": request " + std::to_string(i) + ": arrivals must be sorted and >= 0"};
    }
  }
  RequestTrace trace;
  trace.name_ = std::move(name);
  trace.requests_ = std::move(requests);
  return trace;
}

}  // namespace wattcut::polca
