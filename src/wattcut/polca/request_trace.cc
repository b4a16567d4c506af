#include "wattcut/polca/request_trace.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/polca/trace_row_check.h"

namespace wattcut::polca {
namespace {

// Days from 1970-01-01 to year-month-day (proleptic Gregorian), after H. Hinnant's
// civil-from-days derivation.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The inverse of DaysFromCivil (same derivation).
void CivilFromDays(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = yoe + era * 400 + (m <= 2);
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

Result<double> ParseTimestamp(const std::string& text) {
  const std::string quoted = "'" + PrintableText(text) + "'";
  const std::string expected = "expected a timestamp 'YYYY-MM-DD HH:MM:SS[.fraction]', got " + quoted;
  // Fixed layout: 0123456789012345678
  //               YYYY-MM-DD HH:MM:SS
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') || text[13] != ':' ||
      text[16] != ':') {
    return Error{expected};
  }
  auto digits = [&](size_t from, size_t count, int64_t& out) {
    out = 0;
    for (size_t i = from; i < from + count; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int64_t year, month, day, hour, minute, second;
  if (!digits(0, 4, year) || !digits(5, 2, month) || !digits(8, 2, day) || !digits(11, 2, hour) ||
      !digits(14, 2, minute) || !digits(17, 2, second)) {
    return Error{expected};
  }
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return Error{"month out of range in " + quoted};
  int64_t month_days = kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0);
  if (day < 1 || day > month_days) return Error{"day out of range in " + quoted};
  if (hour > 23 || minute > 59 || second > 60) return Error{"time of day out of range in " + quoted};
  size_t at = 19;
  double fraction = 0;
  if (at < text.size() && text[at] == '.') {
    double scale = 0.1;
    for (++at; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
    }
    if (at == 20 || at > 29) return Error{expected};  // 1 to 9 fractional digits
  }
  // The UTC offset (2024 traces: "+00:00"): the time written is UTC + offset.
  int64_t offset_s = 0;
  if (at < text.size()) {
    const char sign = text[at];
    if (sign != '+' && sign != '-' && sign != 'Z') return Error{expected};
    if (sign == 'Z') {
      if (at + 1 != text.size()) return Error{"expected nothing after the UTC offset 'Z' in " + quoted};
    } else {
      int64_t offset_h, offset_min;
      if (at + 6 != text.size() || text[at + 3] != ':' || !digits(at + 1, 2, offset_h) ||
          !digits(at + 4, 2, offset_min)) {
        return Error{"expected a UTC offset Z, +HH:MM or -HH:MM after the time in " + quoted};
      }
      if (offset_h > 23 || offset_min > 59) return Error{"UTC offset out of range in " + quoted};
      offset_s = (sign == '+' ? 1 : -1) * (offset_h * 3600 + offset_min * 60);
    }
  }
  int64_t days = DaysFromCivil(year, month, day);
  return static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second - offset_s) + fraction;
}

std::string FormatTimestamp(double utc_s) {
  const auto micros = static_cast<int64_t>(std::llround(utc_s * 1e6));
  const int64_t seconds = micros / 1'000'000;
  const int64_t days = seconds / 86400;
  const int64_t in_day = seconds % 86400;
  int64_t y, m, d;
  CivilFromDays(days, y, m, d);
  char text[128];
  std::snprintf(text, sizeof(text), "%04lld-%02lld-%02lld %02lld:%02lld:%02lld.%06lld+00:00", static_cast<long long>(y),
                static_cast<long long>(m), static_cast<long long>(d), static_cast<long long>(in_day / 3600),
                static_cast<long long>(in_day / 60 % 60), static_cast<long long>(in_day % 60),
                static_cast<long long>(micros % 1'000'000));
  return text;
}

Result<RequestTrace> RequestTrace::Read(const std::string& path) {
  Result<CsvTable> table = CsvTable::Read(path, kMaxTraceFileBytes);
  if (!table.ok()) return table.error();
  return FromTable(*table);
}

Result<RequestTrace> RequestTrace::FromTable(const CsvTable& t) {
  RequestTrace trace;
  trace.name_ = t.source_name();
  Result<TraceRowCheck> check = TraceRowCheck::ForHeader(
      t, {kMaxTraceSpanS, "31 days", "a trace is replayed as the shape of every block and should span about an hour"});
  if (!check.ok()) return check.error();
  if (t.rows().empty()) return Error{t.source_name() + ": no requests after the header"};
  if (t.rows().size() > static_cast<size_t>(kMaxTraceRequests)) {
    return Error{t.source_name() + ": " + std::to_string(t.rows().size()) + " requests, more than the " +
                 std::to_string(kMaxTraceRequests) +
                 " a trace may hold (the expansion replays it as every block; --time-of-day trace streams a "
                 "longer one)"};
  }
  trace.requests_.reserve(t.rows().size());
  for (const CsvRow& row : t.rows()) {
    Result<TraceRequest> request = check->Check(t, row);
    if (!request.ok()) return request.error();
    trace.requests_.push_back(*request);
  }
  trace.start_timestamp_ = check->start_timestamp();
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
