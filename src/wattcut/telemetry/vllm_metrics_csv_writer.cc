#include "wattcut/telemetry/vllm_metrics_csv_writer.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace wattcut::telemetry {

std::string VllmMetricsCsvText(const ServingLoadSeries& series) {
  struct Column {
    const char* name;
    double ServingLoadSample::*field;
    int decimals;
  };
  const Column all[] = {
      {"vllm:num_requests_running", &ServingLoadSample::running, 0},
      {"vllm:num_requests_waiting", &ServingLoadSample::waiting, 0},
      {"vllm:prompt_tokens_total", &ServingLoadSample::prompt_tokens, 0},
      {"vllm:generation_tokens_total", &ServingLoadSample::generation_tokens, 0},
      {"vllm:time_to_first_token_seconds_count", &ServingLoadSample::first_tokens, 0},
      {"vllm:request_success_total", &ServingLoadSample::finished_requests, 0},
      {"vllm:iteration_tokens_total_count", &ServingLoadSample::iterations, 0},
      {"vllm:iteration_tokens_total_sum", &ServingLoadSample::iteration_tokens, 0},
  };
  std::vector<Column> columns;
  for (const Column& c : all) {
    for (const ServingLoadSample& s : series.samples) {
      if (!std::isnan(s.*c.field)) {
        columns.push_back(c);
        break;
      }
    }
  }
  std::string out = "time";
  for (const Column& c : columns) out += std::string(",") + c.name;
  out += "\n";
  char buf[64];
  for (const ServingLoadSample& s : series.samples) {
    std::snprintf(buf, sizeof(buf), "%.3f", s.time_s);
    out += buf;
    for (const Column& c : columns) {
      const double v = s.*c.field;
      if (std::isnan(v)) {
        out += ",";
      } else {
        std::snprintf(buf, sizeof(buf), ",%.*f", c.decimals, v);
        out += buf;
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace wattcut::telemetry
