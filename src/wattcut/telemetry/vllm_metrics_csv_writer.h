// vLLM's load metrics over time as a CSV: the `time` of each scrape (Unix seconds) and one column
// per metric, named exactly as vLLM exports it (vllm:num_requests_running, ...): what
// serving_load_reader reads, and what the project's tests and docs example feed `polca calibrate`.
#pragma once

#include <string>

#include "wattcut/telemetry/serving_load_telemetry.h"

namespace wattcut::telemetry {

// One server's samples; quantities that are NaN in every sample are left out of the file, a NaN
// elsewhere is an empty field (a metric not scraped then).
std::string VllmMetricsCsvText(const ServingLoadSeries& series);

}  // namespace wattcut::telemetry
