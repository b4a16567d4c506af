#include "wattcut/polca/trace_row_check.h"

#include <algorithm>
#include <utility>

#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"

namespace wattcut::polca {

Result<TraceRowCheck> TraceRowCheck::ForHeader(const CsvTable& t, TraceSpanBound bound,
                                               const std::vector<std::string>& other_columns) {
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
  // Another column is refused rather than passed over: a trace with a fourth column is another
  // format (a request log names each request's server: polca calibrate --load reads that).
  if (t.header().size() > 3) {
    std::string extra;
    for (const std::string& name : t.header()) {
      const bool other = std::find(other_columns.begin(), other_columns.end(), name) != other_columns.end();
      if (name != kColumns[0] && name != kColumns[1] && name != kColumns[2] && !other) {
        extra += (extra.empty() ? "'" : ", '") + PrintableText(name, 64) + "'";
      }
    }
    if (!extra.empty()) {
      return Error{t.source_name() + ":1: column " + extra +
                   " is not a request trace's (expected header TIMESTAMP,ContextTokens,GeneratedTokens)"};
    }
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
    // A count is written without a sign: "+5" is not how a trace writes one.
    const std::string& text = row.fields[columns_[k + 1]];
    if (!text.empty() && text[0] == '+') {
      return Error{t.where(row, columns_[k + 1]) + "expected a token count (digits), got '" + PrintableText(text) +
                   "'"};
    }
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
