#include "wattcut/polca/request_trace.h"

#include <utility>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {

Result<RequestTrace> RequestTrace::Read(const std::string& path) {
  Result<CsvTable> table = CsvTable::Read(path, kMaxTraceFileBytes);
  if (!table.ok()) return table.error();
  return FromTable(*table);
}

Result<RequestTrace> RequestTrace::FromTable(const CsvTable& t) {
  RequestTrace trace;
  trace.name_ = t.source_name();
  const char* kColumns[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
  size_t columns[3];
  for (int i = 0; i < 3; ++i) {
    auto c = t.column(kColumns[i]);
    if (!c) {
      return Error{t.source_name() + ": missing column '" + kColumns[i] +
                   "' (expected header TIMESTAMP,ContextTokens,GeneratedTokens)"};
    }
    columns[i] = *c;
  }
  if (t.rows().empty()) return Error{t.source_name() + ": no requests after the header"};
  if (t.rows().size() > static_cast<size_t>(kMaxTraceRequests)) {
    return Error{t.source_name() + ": " + std::to_string(t.rows().size()) + " requests, more than the " +
                 std::to_string(kMaxTraceRequests) + " a trace may hold (the expansion replays it as every block)"};
  }
  double first = 0;
  double previous = 0;
  trace.requests_.reserve(t.rows().size());
  for (const CsvRow& row : t.rows()) {
    Result<double> when = ParseTimestamp(row.fields[columns[0]]);
    if (!when.ok()) return Error{t.where(row, columns[0]) + when.error().message};
    if (trace.requests_.empty()) {
      first = *when;
      trace.start_timestamp_ = row.fields[columns[0]];
    } else if (*when < previous) {
      return Error{t.where(row, columns[0]) + "timestamps must not decrease: '" +
                   PrintableText(row.fields[columns[0]]) + "' is earlier than the row before"};
    } else if (*when - first > kMaxTraceSpanS) {
      return Error{t.where(row, columns[0]) + "'" + PrintableText(row.fields[columns[0]]) +
                   "' is more than 31 days after the first request ('" + PrintableText(trace.start_timestamp_) +
                   "'); a trace is replayed as the shape of every block and "
                   "should span about an hour"};
    }
    previous = *when;
    int64_t tokens[2];
    for (int k = 0; k < 2; ++k) {
      Result<int64_t> v = t.integer(row, columns[k + 1]);
      if (!v.ok()) return v.error();
      if (*v < 1) {
        return Error{t.where(row, columns[k + 1]) + "expected a positive token count, got " + std::to_string(*v)};
      }
      if (*v > kMaxTokensPerRequest) {
        return Error{t.where(row, columns[k + 1]) + "expected at most " + std::to_string(kMaxTokensPerRequest) +
                     " tokens per request, got " + std::to_string(*v)};
      }
      tokens[k] = *v;
    }
    trace.requests_.push_back({*when - first, static_cast<int32_t>(tokens[0]), static_cast<int32_t>(tokens[1])});
  }
  return trace;
}

Result<RequestTrace> RequestTrace::Parse(const std::string& text, const std::string& source_name) {
  Result<CsvTable> table = CsvTable::Parse(text, source_name);
  if (!table.ok()) return table.error();
  return FromTable(*table);
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
