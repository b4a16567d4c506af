// vLLM's load metrics over time, into ServingLoadTelemetry (serving_load_telemetry.h), from
//
//  (a) a Prometheus range-query answer (prometheus_matrix.h) holding any of the metrics below,
//      e.g. curl -sG .../api/v1/query_range --data-urlencode 'query={__name__=~"vllm:.*"}' ...;
//      a series' server is its `server_label` label (default `instance`). Series of one server
//      and metric that differ in other labels (v1's finished_reason on request_success_total, a
//      model_name) are summed at each time;
//  (b) a CSV whose first column is `time` or `timestamp` (Unix seconds, or ISO 8601 UTC as
//      base/iso_time.h reads it; every row the form of the first), an optional `server` column,
//      and columns named exactly by metric: an unknown column is refused by name, so that a
//      typo is not ignored. An empty cell is a metric not scraped at that time.
//
// Metrics (the same names in vLLM's v0 and v1 engines, per vLLM's production-metrics docs):
//   vllm:num_requests_running, vllm:num_requests_waiting              gauges: finite, >= 0
//   vllm:prompt_tokens_total, vllm:generation_tokens_total,
//   vllm:time_to_first_token_seconds_count, vllm:request_success_total  counters
// Counters are made cumulative from the file's first sample, and a decrease (a restarted server)
// is a reset: the count before it is added back, with a note. A file must hold at least
// vllm:num_requests_running and the two token counters; the error says which are missing.
// Samples of a server are aligned on their timestamps (the union; a metric without a value at a
// time is NaN there). Bounds: telemetry_limits.h and prometheus_matrix.h.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/prometheus_matrix.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::telemetry {

struct ServingLoadOptions {
  std::string server_label = "instance";  // Prometheus
  std::string server;                     // CSV without a server column: its server ("": the file's stem)
};

Result<ServingLoadTelemetry> ServingLoadFromPrometheus(const PrometheusMatrix& matrix,
                                                       const ServingLoadOptions& options);
Result<ServingLoadTelemetry> ParseServingLoadCsv(const std::string& text, const std::string& source_name,
                                                 const ServingLoadOptions& options);
// Text already read: JSON ('{' first) as (a), anything else as (b); `source_name` stands for the
// file in messages (and names a CSV's server when options.server is empty: its stem).
Result<ServingLoadTelemetry> ParseServingLoad(const std::string& text, const std::string& source_name,
                                              const ServingLoadOptions& options);
// The file at `path`, read and then parsed as ParseServingLoad does.
Result<ServingLoadTelemetry> ReadServingLoad(const std::string& path, const ServingLoadOptions& options);

}  // namespace wattcut::telemetry
