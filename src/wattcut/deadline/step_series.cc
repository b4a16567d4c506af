#include "wattcut/deadline/step_series.h"

#include <algorithm>
#include <cmath>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/fixed_decimals.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::deadline {
namespace {

constexpr uint64_t kMaxFileBytes = uint64_t{64} << 20;
constexpr size_t kMaxRows = 1'000'000;
// 9999-12-31T23:59:59Z: the last time an ISO 8601 date (four-digit year) can say.
constexpr double kLatestTimeS = 253'402'300'799;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::string("'") + names[i] + "'";
  return out;
}

// The time column: ISO 8601 or seconds since 1970, the first row's form throughout.
Result<double> ReadTime(const CsvTable& t, const CsvRow& row, bool iso) {
  const std::string& text = row.fields[0];
  if (iso != LooksLikeIsoDate(text)) {
    return Error{t.where(row, 0) + "expected " + (iso ? "an ISO 8601 time" : "seconds since 1970") +
                 " like the first row's, got '" + PrintableText(text) + "'"};
  }
  if (iso) {
    Result<double> v = ParseIsoTime(text);
    if (!v.ok()) return Error{t.where(row, 0) + v.error().message};
    return *v;
  }
  Result<double> v = t.number(row, 0);
  if (!v.ok() || !(*v >= 0 && *v <= kLatestTimeS)) {
    return Error{t.where(row, 0) + "expected an ISO 8601 time or seconds since 1970 (0 to " +
                 FixedDecimals(kLatestTimeS, 0) + ", the end of 9999), got '" + PrintableText(text) + "'"};
  }
  return *v;
}

}  // namespace

const Step* StepSeries::At(double time_s) const {
  auto it = std::upper_bound(steps.begin(), steps.end(), time_s, [](double t, const Step& s) { return t < s.time_s; });
  return it == steps.begin() ? nullptr : &*(it - 1);
}

Result<StepSeries> ParseStepSeries(const std::string& text, const std::string& source, const StepSeriesSpec& spec) {
  Result<CsvTable> table = CsvTable::Parse(text, source);
  if (!table.ok()) return table.error();
  const CsvTable& t = *table;
  const std::string expected = "time," + (spec.value_names.empty() ? std::string("VALUE") : spec.value_names.front());
  if (t.header().size() != 2 || t.header()[0] != "time") {
    std::string header;
    for (const std::string& name : t.header()) header += (header.empty() ? "" : ",") + name;
    return Error{source + ":1: expected the header '" + expected + "' (two columns, the first 'time') for the " +
                 spec.what + ", got '" + PrintableText(header) + "'"};
  }
  if (!spec.value_names.empty() &&
      std::find(spec.value_names.begin(), spec.value_names.end(), t.header()[1]) == spec.value_names.end()) {
    return Error{source + ":1: column 2: expected " + Join(spec.value_names) + " for the " + spec.what + ", got '" +
                 PrintableText(t.header()[1]) + "'"};
  }
  if (t.rows().empty()) return Error{source + ": no rows: the " + spec.what + " needs at least one"};
  if (t.rows().size() > kMaxRows) {
    return Error{source + ": " + std::to_string(t.rows().size()) + " rows, more than the " + std::to_string(kMaxRows) +
                 " a " + spec.what + " series may have"};
  }
  StepSeries out;
  out.source = source;
  out.value_name = t.header()[1];
  const bool iso = LooksLikeIsoDate(t.rows().front().fields[0]);
  for (const CsvRow& row : t.rows()) {
    Result<double> when = ReadTime(t, row, iso);
    if (!when.ok()) return when.error();
    if (!out.steps.empty() && !(*when > out.steps.back().time_s)) {
      const Step& prev = out.steps.back();
      return Error{t.where(row, 0) + "times must increase: '" + PrintableText(row.fields[0]) + "' is " +
                   (*when == prev.time_s ? "the same as" : "before") + " line " + std::to_string(prev.line) +
                   "'s (sort the file and keep one row per time)"};
    }
    Result<double> value = t.number(row, 1);
    if (!value.ok()) return value.error();
    const bool below = spec.min_exclusive ? !(*value > spec.min_value) : !(*value >= spec.min_value);
    if (!std::isfinite(*value) || below) {
      return Error{t.where(row, 1) + "expected a " + spec.what + " " + (spec.min_exclusive ? "> " : ">= ") +
                   FixedDecimals(spec.min_value, 0) + ", got '" + PrintableText(row.fields[1]) + "'"};
    }
    out.steps.push_back({*when, *value, row.line});
  }
  return out;
}

Result<StepSeries> ReadStepSeries(const std::string& path, const StepSeriesSpec& spec) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxFileBytes);
  if (!text.ok()) return text.error();
  return ParseStepSeries(*text, path, spec);
}

}  // namespace wattcut::deadline
