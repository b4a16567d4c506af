#include "wattcut/polca/trace_row_check.h"

#include <utility>

#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {

Result<TraceRowCheck> TraceRowCheck::ForHeader(const CsvTable& t, TraceSpanBound bound) {
  TraceRowCheck check;
  check.bound_ = std::move(bound);
  const char* kColumns[] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
  for (int i = 0; i < 3; ++i) {
    auto c = t.column(kColumns[i]);
    if (!c) {
      return Error{t.source_name() + ": missing column '" + kColumns[i] +
                   "' (expected header TIMESTAMP,ContextTokens,GeneratedTokens)"};
    }
    check.columns_[i] = *c;
  }
  return check;
}

Result<TraceRequest> TraceRowCheck::Check(const CsvTable& t, const CsvRow& row) {
  const std::string& timestamp = row.fields[columns_[0]];
  Result<double> when = ParseTimestamp(timestamp);
  if (!when.ok()) return Error{t.where(row, columns_[0]) + when.error().message};
  if (rows_checked_ == 0) {
    first_s_ = *when;
    start_timestamp_ = timestamp;
  } else if (*when < previous_s_) {
    return Error{t.where(row, columns_[0]) + "timestamps must not decrease: '" + PrintableText(timestamp) +
                 "' is earlier than the row before"};
  } else if (*when - first_s_ > bound_.max_span_s) {
    return Error{t.where(row, columns_[0]) + "'" + PrintableText(timestamp) + "' is more than " + bound_.limit +
                 " after the first request ('" + PrintableText(start_timestamp_) + "'); " + bound_.reason};
  }
  int64_t tokens[2];
  for (int k = 0; k < 2; ++k) {
    Result<int64_t> v = t.integer(row, columns_[k + 1]);
    if (!v.ok()) return v.error();
    if (*v < 1) {
      return Error{t.where(row, columns_[k + 1]) + "expected a positive token count, got " + std::to_string(*v)};
    }
    if (*v > kMaxTokensPerRequest) {
      return Error{t.where(row, columns_[k + 1]) + "expected at most " + std::to_string(kMaxTokensPerRequest) +
                   " tokens per request, got " + std::to_string(*v)};
    }
    tokens[k] = *v;
  }
  previous_s_ = *when;
  ++rows_checked_;
  return TraceRequest{*when - first_s_, static_cast<int32_t>(tokens[0]), static_cast<int32_t>(tokens[1])};
}

}  // namespace wattcut::polca
