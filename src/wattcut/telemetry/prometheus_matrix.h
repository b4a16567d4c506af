// The answer of Prometheus' HTTP API to a range query (GET /api/v1/query_range), as
//
//   curl -s 'http://prometheus:9090/api/v1/query_range?query=DCGM_FI_DEV_POWER_USAGE&start=...&end=...&step=5s'
//
// saves it:
//
//   {"status":"success","data":{"resultType":"matrix","result":[
//     {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0","Hostname":"node-a",...},
//      "values":[[1714564800.123,"85.5"],[1714564805.123,"86.1"]]}]}}
//
// Per Prometheus' API documentation: every answer has "status" ("success" or "error"; an error
// carries "errorType" and "error"), "data" holds "resultType" and "result"; a range query's result
// is a "matrix", a list of series, each with its labels ("metric") and "values", pairs of a Unix
// time in seconds (a number) and the sample value as a string ("85.5", "NaN", "+Inf", "-Inf").
// "warnings" and "infos" may come with a success.
//
// Read strictly: a key given twice is refused with its JSON path (base/json_text_check.h), and
// every error names the file and the JSON path of the bad element
// ("FILE: data.result[3].values[17][1]: expected ..., got ..."). An error answer is reported with
// its errorType and error; a vector, scalar or string result (an instant query) is refused by
// name. The JSON is held as a document while it is read (about ten times its size), so a file is
// at most kMaxPrometheusFileBytes, refused before it is read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wattcut/base/result.h"

namespace wattcut::telemetry {

inline constexpr uint64_t kMaxPrometheusFileBytes = uint64_t{256} << 20;

struct PrometheusPoint {
  double time_s = 0;  // Unix seconds, finite, >= 0
  double value = 0;   // as Prometheus wrote it: NaN and +-inf are kept, the user of a series decides
};

struct PrometheusSeries {
  std::map<std::string, std::string> labels;  // "metric", "__name__" included when the query kept it
  std::vector<PrometheusPoint> points;        // increasing time; points[i] is values[i] of the file
};

struct PrometheusMatrix {
  std::string source;
  std::vector<PrometheusSeries> series;  // series[i] is data.result[i]
  std::vector<std::string> warnings;     // the answer's "warnings" and "infos"
};

Result<PrometheusMatrix> ParsePrometheusMatrix(const std::string& text, const std::string& source_name);
Result<PrometheusMatrix> ReadPrometheusMatrix(const std::string& path);

// "data.result[3].values[17]" (and "[1]" appended by callers for the value), for messages.
std::string PrometheusPointPath(size_t series, size_t point);
// The series' metric name, "" when the query dropped it (an expression such as avg(...)).
std::string MetricName(const PrometheusSeries& series);

}  // namespace wattcut::telemetry
