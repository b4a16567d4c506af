// vLLM's load metrics over time from a CSV (what vllm_metrics_csv_writer.h writes, and what a
// Prometheus or Grafana export of the series gives after renaming its columns):
//
//   time,vllm:num_requests_running,vllm:num_requests_waiting,vllm:prompt_tokens_total,...
//   1715299200.000,3,0,183402,1220395,...
//
// `time` is Unix seconds; the other columns are named exactly as vLLM exports the metrics:
// vllm:num_requests_running, vllm:num_requests_waiting, vllm:prompt_tokens_total,
// vllm:generation_tokens_total, vllm:time_to_first_token_seconds_count, vllm:request_success_total.
// An nvidia-smi file passed here is refused by name. An unknown column is refused by name (a typo
// would otherwise be ignored); running and the two
// token counters are required. Gauges must be finite and >= 0; a counter that decreases was reset
// (a restarted server): what it had counted is added back, and a note says how often. `NaN`
// stands for a missing reading. Times must increase. Errors name FILE:LINE: column.
#pragma once

#include <string>

#include "wattcut/base/result.h"
#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::telemetry {

// `server`: the series' name (empty: the file name without extension).
Result<ServingLoadTelemetry> ReadVllmMetricsCsv(const std::string& path, const std::string& server);
Result<ServingLoadTelemetry> ParseVllmMetricsCsv(const std::string& text, const std::string& source_name,
                                                 const std::string& server);

}  // namespace wattcut::telemetry
