#include "wattcut/telemetry/vllm_metrics_csv_reader.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/nvidia_smi_csv_reader.h"  // kMaxTelemetryFileBytes, LooksLikeNvidiaSmiCsv

namespace wattcut::telemetry {
namespace {

struct Metric {
  const char* name;
  double ServingLoadSample::*field;
  bool counter;
};

constexpr Metric kMetrics[] = {
    {"vllm:num_requests_running", &ServingLoadSample::running, false},
    {"vllm:num_requests_waiting", &ServingLoadSample::waiting, false},
    {"vllm:prompt_tokens_total", &ServingLoadSample::prompt_tokens, true},
    {"vllm:generation_tokens_total", &ServingLoadSample::generation_tokens, true},
    {"vllm:time_to_first_token_seconds_count", &ServingLoadSample::first_tokens, true},
    {"vllm:request_success_total", &ServingLoadSample::finished_requests, true},
};

}  // namespace

Result<ServingLoadTelemetry> ParseVllmMetricsCsv(const std::string& text, const std::string& source_name,
                                                 const std::string& server) {
  if (LooksLikeNvidiaSmiCsv(text)) {
    return Error{source_name +
                 ": this is nvidia-smi's CSV (power), not vLLM metrics (load): pass it as the power file"};
  }
  ServingLoadTelemetry out;
  out.source = source_name;
  out.format = "vllm-csv";
  ServingLoadSeries series;
  series.server = server.empty() ? std::filesystem::path(source_name).stem().string() : server;
  std::optional<size_t> time_col;
  std::vector<std::pair<size_t, const Metric*>> columns;
  std::vector<double> last_raw, added;
  int resets = 0;
  auto on_header = [&](const CsvTable& table) -> Status {
    for (size_t i = 0; i < table.header().size(); ++i) {
      const std::string& h = table.header()[i];
      if (h == "time" || h == "timestamp") {
        time_col = i;
        continue;
      }
      const Metric* m = nullptr;
      for (const Metric& k : kMetrics) {
        if (h == k.name) m = &k;
      }
      if (!m) {
        std::string known;
        for (const Metric& k : kMetrics) known += std::string(known.empty() ? "" : ", ") + k.name;
        return Error{source_name + ":1: column '" + PrintableText(h) + "': not a vLLM metric this reader knows (" +
                     known + ")"};
      }
      columns.push_back({i, m});
    }
    if (!time_col) return Error{source_name + ":1: expected a 'time' column (Unix seconds)"};
    for (const char* required :
         {"vllm:num_requests_running", "vllm:prompt_tokens_total", "vllm:generation_tokens_total"}) {
      bool found = false;
      for (const auto& [i, m] : columns) found = found || std::string(m->name) == required;
      if (!found) return Error{source_name + ":1: missing column '" + std::string(required) + "'"};
    }
    last_raw.assign(columns.size(), std::nan(""));
    added.assign(columns.size(), 0.0);
    return Status{};
  };
  auto on_row = [&](const CsvTable& table, CsvRow& row) -> Status {
    Result<double> t = table.number(row, *time_col);
    if (!t.ok()) return t.error();
    if (!std::isfinite(*t) || *t < 0 || *t > 4.1e9) {
      return Error{table.where(row, *time_col) + "expected Unix seconds, got '" + PrintableText(row.fields[*time_col]) +
                   "'"};
    }
    if (!series.samples.empty() && !(*t > series.samples.back().time_s)) {
      return Error{table.where(row, *time_col) + "expected a time after the previous row's"};
    }
    ServingLoadSample s;
    s.time_s = *t;
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto& [i, m] = columns[c];
      const std::string& v = row.fields[i];
      if (v == "NaN" || v.empty()) continue;
      Result<double> x = table.number(row, i);
      if (!x.ok()) return x.error();
      if (!std::isfinite(*x) || *x < 0 || *x > 1e15) {
        return Error{table.where(row, i) + "expected a finite count >= 0, got '" + PrintableText(v) + "'"};
      }
      double value = *x;
      if (m->counter) {
        if (!std::isnan(last_raw[c]) && value < last_raw[c]) {
          added[c] += last_raw[c];  // reset: what it had counted is added back
          ++resets;
        }
        last_raw[c] = value;
        value += added[c];
      }
      s.*(m->field) = value;
    }
    series.samples.push_back(s);
    return Status{};
  };
  if (Status st = CsvTable::ForEachRow(text, source_name, on_header, on_row); !st.ok()) return st.error();
  if (series.samples.size() < 2) return Error{source_name + ": fewer than two scrapes"};
  if (resets > 0) out.notes.push_back(std::to_string(resets) + " counter resets were added back");
  out.servers.push_back(std::move(series));
  return out;
}

Result<ServingLoadTelemetry> ReadVllmMetricsCsv(const std::string& path, const std::string& server) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTelemetryFileBytes);
  if (!text.ok()) return text.error();
  return ParseVllmMetricsCsv(*text, path, server);
}

}  // namespace wattcut::telemetry
