#include "wattcut/telemetry/serving_load_reader.h"

#include <algorithm>
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

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + PrintableText(names[i]);
  if (names.size() > 8) out += " and " + std::to_string(names.size() - 8) + " more";
  return out;
}

struct Metric {
  const char* name;    // vLLM's
  const char* sglang;  // SGLang's name for the same quantity, or null
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
    {"vllm:num_requests_running", "sglang:num_running_reqs", &ServingLoadSample::running, false, kMaxGaugeRequests},
    {"vllm:num_requests_waiting", "sglang:num_queue_reqs", &ServingLoadSample::waiting, false, kMaxGaugeRequests},
    {"vllm:prompt_tokens_total", "sglang:prompt_tokens_total", &ServingLoadSample::prompt_tokens, true,
     kMaxCounterValue},
    {"vllm:generation_tokens_total", "sglang:generation_tokens_total", &ServingLoadSample::generation_tokens, true,
     kMaxCounterValue},
    {"vllm:time_to_first_token_seconds_count", "sglang:time_to_first_token_seconds_count",
     &ServingLoadSample::first_tokens, true, kMaxCounterValue},
    {"vllm:request_success_total", nullptr, &ServingLoadSample::finished_requests, true, kMaxCounterValue},
    {"vllm:iteration_tokens_total_count", nullptr, &ServingLoadSample::iterations, true, kMaxCounterValue},
    {"vllm:iteration_tokens_total_sum", nullptr, &ServingLoadSample::iteration_tokens, true, kMaxCounterValue},
    {"vllm:prefix_cache_hits_total", "sglang:cached_tokens_total", &ServingLoadSample::cached_prompt_tokens, true,
     kMaxCounterValue},
};
constexpr size_t kRunning = 0, kPrompt = 2, kGeneration = 3, kIterations = 6;

// Metrics the engines export that say nothing the fit uses: a column of one is read past, named in
// a note, rather than refused as unknown (a recorder writes what it scrapes).
constexpr const char* kUnusedMetrics[] = {
    "vllm:gpu_cache_usage_perc",
    "vllm:kv_cache_usage_perc",
    "vllm:cpu_cache_usage_perc",
    "vllm:num_preemptions_total",
    "vllm:num_requests_swapped",
    "vllm:gpu_prefix_cache_hit_rate",
    "vllm:time_to_first_token_seconds_sum",
    "sglang:token_usage",
    "sglang:cache_hit_rate",
    "sglang:gen_throughput",
    "sglang:num_requests_total",
    "vllm:prefix_cache_queries_total",
};

// "" when `value` of metric `m` can be a server's, else what is wrong with it (after "expected").
std::string ImplausibleValue(size_t m, double value) {
  if (value <= kMetrics[m].max_value) return "";
  return std::string(kMetrics[m].name) + " at most " + GeneralText(kMetrics[m].max_value) + " (" +
         (kMetrics[m].counter ? "a counter since the engine started" : "requests in one engine") + "), got " +
         GeneralText(value);
}
constexpr size_t kMetricCount = sizeof(kMetrics) / sizeof(kMetrics[0]);

std::string WithoutEnginePrefix(std::string_view name) {
  const size_t colon = name.find(':');
  return std::string(colon == std::string_view::npos ? name : name.substr(colon + 1));
}

// `name` is `full` ("vllm:x") or its name without the engine's prefix ("x").
bool NameIs(const std::string& name, const char* full) {
  return full != nullptr && (name == full || name == WithoutEnginePrefix(full));
}

struct MetricMatch {
  size_t index;
  bool sglang;
};

std::optional<MetricMatch> MetricIndex(const std::string& name) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (NameIs(name, kMetrics[i].name)) return MetricMatch{i, false};
  }
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (NameIs(name, kMetrics[i].sglang)) return MetricMatch{i, true};
  }
  return std::nullopt;
}

bool IsUnusedMetric(const std::string& name) {
  for (const char* u : kUnusedMetrics) {
    if (NameIs(name, u)) return true;
  }
  return false;
}

// Levenshtein distance; names whose lengths differ by more than `limit` answer limit + 1 at once.
size_t EditDistance(const std::string& a, const std::string& b, size_t limit) {
  if (a.size() > b.size() + limit || b.size() > a.size() + limit) return limit + 1;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The metric read here that `name` is a near miss of (a typo), or null: an unknown column is read
// past unless it is one, so that a recorder's other metrics pass and a misspelt one does not.
const char* NearMissOf(const std::string& name) {
  const std::string bare = WithoutEnginePrefix(name);
  for (const Metric& m : kMetrics) {
    for (const char* full : {m.name, m.sglang}) {
      if (full != nullptr && EditDistance(bare, WithoutEnginePrefix(full), 2) <= 2) return full;
    }
  }
  return nullptr;
}

std::string MetricList() {
  std::string out;
  for (size_t i = 0; i < kMetricCount; ++i) out += (i ? ", " : "") + std::string(kMetrics[i].name);
  return out + " (with or without the vllm: prefix, or SGLang's names)";
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
                                    const std::array<bool, kMetricCount>& present, bool sglang,
                                    std::vector<std::string> notes) {
  // When the engine had work is the least a load must say: the running requests, or the steps.
  if (!present[kRunning] && !present[kIterations]) {
    return Error{source + ": missing vllm:num_requests_running and vllm:iteration_tokens_total_count: a serving " +
                 "load needs one of them to say when the engine had work (read here: " + MetricList() + ")"};
  }
  std::string absent;
  for (size_t m : {kPrompt, kGeneration}) {
    if (!present[m]) absent += (absent.empty() ? "" : " and ") + std::string(kMetrics[m].name);
  }
  if (!absent.empty()) {
    notes.push_back(source + ": no " + absent + ": the power that follows those tokens cannot be told apart");
  }
  ServingLoadTelemetry out;
  out.source = source;
  out.format = format;
  out.engine = sglang ? "sglang" : "vllm";
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
  bool sglang = false;
  int not_finite = 0;
  std::vector<std::string> unused;
  for (size_t i = 0; i < matrix.series.size(); ++i) {
    const PrometheusSeries& s = matrix.series[i];
    const std::string path = "data.result[" + std::to_string(i) + "]";
    const std::string name = MetricName(s);
    std::optional<MetricMatch> match = MetricIndex(name);
    if (!match && IsUnusedMetric(name)) {
      if (std::find(unused.begin(), unused.end(), name) == unused.end()) unused.push_back(name);
      continue;
    }
    if (!match) {
      return Error{at + path + ".metric: metric '" + PrintableText(name) + "' is not a load metric read here (" +
                   MetricList() + ")"};
    }
    sglang = sglang || match->sglang;
    const std::optional<size_t> m = match->index;
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
  if (!unused.empty()) notes.push_back(at + "not used: " + Joined(unused));
  return Finish(std::move(table), matrix.source, "prometheus", present, sglang, std::move(notes));
}

Result<ServingLoadTelemetry> ParseServingLoadCsv(const std::string& text, const std::string& source_name,
                                                 const ServingLoadOptions& options) {
  Table table;
  std::array<bool, kMetricCount> present{};
  bool sglang = false;
  std::vector<std::string> unused;
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
          const std::optional<MetricMatch> match = MetricIndex(h[c]);
          if (!match && (IsUnusedMetric(h[c]) || NearMissOf(h[c]) == nullptr)) {
            unused.push_back(h[c]);
            continue;
          }
          if (!match) {
            return Error{source_name + ":1: column '" + PrintableText(h[c]) + "' is not a metric read here; did you " +
                         "mean '" + NearMissOf(h[c]) + "'? (read: time or timestamp, an optional server, and " +
                         MetricList() + ")"};
          }
          const std::optional<size_t> m = match ? std::optional<size_t>(match->index) : std::nullopt;
          if (match) sglang = sglang || match->sglang;
          if (present[*m]) {
            return Error{source_name + ":1: column '" + PrintableText(h[c]) + "' names " + kMetrics[*m].name +
                         " a second time"};
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
  std::vector<std::string> notes;
  if (!unused.empty()) notes.push_back(source_name + ": columns not used: " + Joined(unused));
  return Finish(std::move(table), source_name, "vllm-csv", present, sglang, std::move(notes));
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
