#include "wattcut/telemetry/serving_load_reader.h"

#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/decimal_text.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::telemetry {
namespace {

struct Metric {
  const char* name;
  double ServingLoadSample::*field;
  bool counter;
  // The most a server's value can be: a gauge counts requests in one engine (10^6 is far beyond a
  // batch and its queue); a counter, tokens or requests since the engine started (10^15 is 10^5
  // tokens a second for 300 years). A value beyond is a broken exporter, refused where it is read:
  // a counter at 1e300 once reached the fit and was reported as "not a consistent config".
  double max_value;
};

constexpr double kMaxGaugeRequests = 1e6;
constexpr double kMaxCounterValue = 1e15;

constexpr Metric kMetrics[] = {
    {"vllm:num_requests_running", &ServingLoadSample::running, false, kMaxGaugeRequests},
    {"vllm:num_requests_waiting", &ServingLoadSample::waiting, false, kMaxGaugeRequests},
    {"vllm:prompt_tokens_total", &ServingLoadSample::prompt_tokens, true, kMaxCounterValue},
    {"vllm:generation_tokens_total", &ServingLoadSample::generation_tokens, true, kMaxCounterValue},
    {"vllm:time_to_first_token_seconds_count", &ServingLoadSample::first_tokens, true, kMaxCounterValue},
    {"vllm:request_success_total", &ServingLoadSample::finished_requests, true, kMaxCounterValue},
};

// "" when `value` of metric `m` can be a server's, else what is wrong with it (after "expected").
std::string ImplausibleValue(size_t m, double value) {
  if (value <= kMetrics[m].max_value) return "";
  return std::string(kMetrics[m].name) + " at most " + GeneralText(kMetrics[m].max_value) + " (" +
         (kMetrics[m].counter ? "a counter since the engine started" : "requests in one engine") + "), got " +
         GeneralText(value);
}
constexpr size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

std::optional<size_t> MetricIndex(const std::string& name) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (name == kMetrics[i].name) return i;
  }
  return std::nullopt;
}

std::string MetricList() {
  std::string out;
  for (size_t i = 0; i < kMetricCount; ++i) out += (i ? ", " : "") + std::string(kMetrics[i].name);
  return out;
}

// Per server: time -> the metrics' raw values (NaN: none at that time).
using Table = std::map<std::string, std::map<double, std::array<double, kMetricCount>>>;

std::array<double, kMetricCount> Unknown() {
  std::array<double, kMetricCount> v;
  v.fill(std::numeric_limits<double>::quiet_NaN());
  return v;
}

// The table as series: counters cumulative from the first sample with resets added back, the
// required metrics checked.
Result<ServingLoadTelemetry> Finish(Table table, const std::string& source, const std::string& format,
                                    const std::array<bool, kMetricCount>& present, std::vector<std::string> notes) {
  std::string missing;
  for (size_t m : {0u, 2u, 3u}) {
    if (!present[m]) missing += (missing.empty() ? "" : ", ") + std::string(kMetrics[m].name);
  }
  if (!missing.empty()) {
    return Error{source + ": missing " + missing + " (a serving load needs vllm:num_requests_running, " +
                 "vllm:prompt_tokens_total and vllm:generation_tokens_total)"};
  }
  ServingLoadTelemetry out;
  out.source = source;
  out.format = format;
  std::array<int, kMetricCount> resets{};
  std::array<int64_t, kMetricCount> fractional{};  // gauges that are not whole requests
  for (auto& [server, rows] : table) {
    ServingLoadSeries series{server, {}};
    std::array<double, kMetricCount> first = Unknown(), previous = Unknown(), added{};
    for (auto& [time_s, values] : rows) {
      ServingLoadSample sample;
      sample.time_s = time_s;
      for (size_t m = 0; m < kMetricCount; ++m) {
        double v = values[m];
        if (std::isnan(v)) continue;
        if (!kMetrics[m].counter && v != std::floor(v)) ++fractional[m];
        if (kMetrics[m].counter) {
          if (std::isnan(first[m])) first[m] = v;
          if (!std::isnan(previous[m]) && v < previous[m]) {
            added[m] += previous[m];
            ++resets[m];
          }
          previous[m] = v;
          v = v + added[m] - first[m];
        }
        sample.*(kMetrics[m].field) = v;
      }
      series.samples.push_back(sample);
    }
    out.servers.push_back(std::move(series));
  }
  for (size_t m = 0; m < kMetricCount; ++m) {
    if (resets[m] > 0) {
      notes.push_back(source + ": " + std::to_string(resets[m]) + " counter resets of " + kMetrics[m].name +
                      " (a server restarted) were added back");
    }
    if (fractional[m] > 0) {
      notes.push_back(source + ": " + std::to_string(fractional[m]) + " samples of " + kMetrics[m].name +
                      " are not whole requests (an average over scrapes, or a recording rule): used as they are, "
                      "so the decode batch and the prefills counted from them are averages too");
    }
  }
  out.notes = std::move(notes);
  return out;
}

}  // namespace

Result<ServingLoadTelemetry> ServingLoadFromPrometheus(const PrometheusMatrix& matrix,
                                                       const ServingLoadOptions& options) {
  const std::string at = matrix.source + ": ";
  Table table;
  std::array<bool, kMetricCount> present{};
  int not_finite = 0;
  for (size_t i = 0; i < matrix.series.size(); ++i) {
    const PrometheusSeries& s = matrix.series[i];
    const std::string path = "data.result[" + std::to_string(i) + "]";
    const std::string name = MetricName(s);
    std::optional<size_t> m = MetricIndex(name);
    if (!m) {
      return Error{at + path + ".metric: metric '" + PrintableText(name) + "' is not a vLLM load metric read here (" +
                   MetricList() + ")"};
    }
    auto label = s.labels.find(options.server_label);
    if (label == s.labels.end() || label->second.empty()) {
      return Error{at + path + ".metric: no label '" + PrintableText(options.server_label) +
                   "' to name the server (--server-label names another)"};
    }
    present[*m] = true;
    auto& rows = table[label->second];
    for (size_t k = 0; k < s.points.size(); ++k) {
      const PrometheusPoint& p = s.points[k];
      if (!std::isfinite(p.value)) {
        ++not_finite;
        continue;
      }
      if (p.value < 0) {
        return Error{at + PrometheusPointPath(i, k) + "[1]: expected " + name + " >= 0, got " + GeneralText(p.value)};
      }
      if (std::string wrong = ImplausibleValue(*m, p.value); !wrong.empty()) {
        return Error{at + PrometheusPointPath(i, k) + "[1]: expected " + wrong};
      }
      auto [it, inserted] = rows.try_emplace(p.time_s, Unknown());
      double& cell = it->second[*m];
      cell = std::isnan(cell) ? p.value : cell + p.value;  // series of one metric summed
    }
  }
  std::vector<std::string> notes = matrix.warnings;
  if (not_finite > 0)
    notes.push_back(at + std::to_string(not_finite) + " samples were NaN or infinite and were skipped");
  return Finish(std::move(table), matrix.source, "prometheus", present, std::move(notes));
}

Result<ServingLoadTelemetry> ParseServingLoadCsv(const std::string& text, const std::string& source_name,
                                                 const ServingLoadOptions& options) {
  Table table;
  std::array<bool, kMetricCount> present{};
  std::vector<std::optional<size_t>> metric_of;  // per column
  std::optional<size_t> server_column;
  bool iso = false;
  size_t rows = 0;
  std::map<std::string, std::pair<double, int>> last;  // server -> time, line
  const std::string default_server = options.server.empty() ? "server" : options.server;
  Status st = CsvTable::ForEachRow(
      text, source_name,
      [&](const CsvTable& t) -> Status {
        const auto& h = t.header();
        if (h.empty() || (h[0] != "time" && h[0] != "timestamp")) {
          return Error{source_name + ":1: expected the first column 'time' or 'timestamp', got '" +
                       PrintableText(h.empty() ? "" : h[0]) + "'"};
        }
        metric_of.assign(h.size(), std::nullopt);
        for (size_t c = 1; c < h.size(); ++c) {
          if (h[c] == "server" && !server_column) {
            server_column = c;
            continue;
          }
          std::optional<size_t> m = MetricIndex(h[c]);
          if (!m || present[*m]) {
            return Error{source_name + ":1: " + (m ? "column named twice" : "unknown column") + " '" +
                         PrintableText(h[c]) +
                         "' (expected time, an optional server, and vLLM metric names: " + MetricList() + ")"};
          }
          metric_of[c] = m;
          present[*m] = true;
        }
        return Status::Ok();
      },
      [&](const CsvTable& t, CsvRow& row) -> Status {
        const std::string& time_text = row.fields[0];
        if (rows++ == 0) iso = LooksLikeIsoDate(time_text);
        double time_s = 0;
        if (iso != LooksLikeIsoDate(time_text)) {
          return Error{t.where(row, 0) + "expected " + (iso ? "an ISO 8601 time" : "seconds") +
                       " like the first row's, got '" + PrintableText(time_text) + "'"};
        }
        if (iso) {
          Result<double> v = ParseIsoTime(time_text);
          if (!v.ok()) return Error{t.where(row, 0) + v.error().message};
          time_s = *v;
        } else {
          std::optional<double> v = ParseDecimal(time_text);
          if (!v || *v < 0) {
            return Error{t.where(row, 0) + "expected Unix seconds >= 0 or an ISO 8601 UTC time, got '" +
                         PrintableText(time_text) + "'"};
          }
          time_s = *v;
        }
        const std::string server = server_column ? row.fields[*server_column] : default_server;
        if (server.empty()) return Error{t.where(row, *server_column) + "expected a server name, got an empty field"};
        if (server.size() > kMaxLabelBytes) {
          return Error{t.where(row, *server_column) + "a server name of " + std::to_string(server.size()) +
                       " bytes, more than the " + std::to_string(kMaxLabelBytes) + " a name may have here"};
        }
        auto [seen, first_row] = last.try_emplace(server, time_s, row.line);
        if (!first_row) {
          if (time_s <= seen->second.first) {
            return Error{t.where(row, 0) + "the rows of server '" + PrintableText(server) +
                         "' must be in increasing time: '" + PrintableText(time_text) + "' is " +
                         (time_s == seen->second.first ? "the same time as" : "earlier than") + " line " +
                         std::to_string(seen->second.second)};
          }
          seen->second = {time_s, row.line};
        }
        std::array<double, kMetricCount> values = Unknown();
        for (size_t c = 1; c < row.fields.size(); ++c) {
          if (!metric_of[c] || row.fields[c].empty()) continue;
          std::optional<double> v = ParseDecimal(row.fields[c]);
          if (!v || *v < 0) {
            return Error{t.where(row, c) + "expected a finite number >= 0 (or an empty field), got '" +
                         PrintableText(row.fields[c]) + "'"};
          }
          if (std::string wrong = ImplausibleValue(*metric_of[c], *v); !wrong.empty()) {
            return Error{t.where(row, c) + "expected " + wrong};
          }
          values[*metric_of[c]] = *v;
        }
        table[server][time_s] = values;
        return Status::Ok();
      });
  if (!st.ok()) return st.error();
  if (rows == 0) return Error{source_name + ": no rows after the header"};
  return Finish(std::move(table), source_name, "vllm-csv", present, {});
}

Result<ServingLoadTelemetry> ParseServingLoad(const std::string& text, const std::string& source_name,
                                              const ServingLoadOptions& options) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && text[start] == '{') {
    if (text.size() > kMaxPrometheusFileBytes) {
      return Error{source_name + ": a Prometheus answer of " + std::to_string(text.size()) + " bytes, more than " +
                   std::to_string(kMaxPrometheusFileBytes)};
    }
    Result<PrometheusMatrix> matrix = ParsePrometheusMatrix(text, source_name);
    if (!matrix.ok()) return matrix.error();
    return ServingLoadFromPrometheus(*matrix, options);
  }
  ServingLoadOptions o = options;
  if (o.server.empty()) o.server = std::filesystem::path(source_name).stem().string();
  return ParseServingLoadCsv(text, source_name, o);
}

Result<ServingLoadTelemetry> ReadServingLoad(const std::string& path, const ServingLoadOptions& options) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTelemetryFileBytes);
  if (!text.ok()) return text.error();
  return ParseServingLoad(*text, path, options);
}

}  // namespace wattcut::telemetry
