// The load of an LLM inference server as its serving engine's metrics record it (vLLM's
// Prometheus metrics over time), read into one shape (serving_load_reader.h reads the formats).
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace wattcut::telemetry {

// One scrape of one server. Gauges are the value at `time_s`; counters are cumulative since the
// file's first sample, with counter resets (a restarted server) already added back, so they never
// decrease. A quantity the file does not hold is NaN.
struct ServingLoadSample {
  double time_s = 0;                                                    // Unix seconds, UTC
  double running = std::numeric_limits<double>::quiet_NaN();            // vllm:num_requests_running
  double waiting = std::numeric_limits<double>::quiet_NaN();            // vllm:num_requests_waiting
  double prompt_tokens = std::numeric_limits<double>::quiet_NaN();      // vllm:prompt_tokens_total
  double generation_tokens = std::numeric_limits<double>::quiet_NaN();  // vllm:generation_tokens_total
  double first_tokens = std::numeric_limits<double>::quiet_NaN();       // vllm:time_to_first_token_seconds_count
  double finished_requests = std::numeric_limits<double>::quiet_NaN();  // vllm:request_success_total
  // The engine's steps and the tokens they processed: vllm:iteration_tokens_total's _count and _sum.
  double iterations = std::numeric_limits<double>::quiet_NaN();
  double iteration_tokens = std::numeric_limits<double>::quiet_NaN();
  // Prompt tokens found in the prefix cache, not computed (vllm:prefix_cache_hits_total, in tokens).
  double cached_prompt_tokens = std::numeric_limits<double>::quiet_NaN();
};

// One server's samples in increasing time.
struct ServingLoadSeries {
  std::string server;
  std::vector<ServingLoadSample> samples;
};

struct ServingLoadTelemetry {
  std::string source;                      // the file as given
  std::string format;                      // "vllm-csv", "prometheus"
  std::string engine = "vllm";             // whose metric names the file used: "vllm" or "sglang"
  std::vector<ServingLoadSeries> servers;  // sorted by server
  std::vector<std::string> notes;          // e.g. "2 counter resets of vllm:prompt_tokens_total were added back"
};

}  // namespace wattcut::telemetry
