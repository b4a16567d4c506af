#include "wattcut/telemetry/prometheus_matrix.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/decimal_text.h"
#include "wattcut/base/json_object.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/base/json_text_check.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::telemetry {
namespace {

using json = nlohmann::json;

std::optional<double> SampleValue(const std::string& text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf") return std::numeric_limits<double>::infinity();
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  return ParseDecimal(text);
}

}  // namespace

std::string PrometheusPointPath(size_t series, size_t point) {
  return "data.result[" + std::to_string(series) + "].values[" + std::to_string(point) + "]";
}

std::string MetricName(const PrometheusSeries& series) {
  auto it = series.labels.find("__name__");
  return it == series.labels.end() ? "" : it->second;
}

Result<PrometheusMatrix> ParsePrometheusMatrix(const std::string& text, const std::string& source_name) {
  const std::string at = source_name + ": ";
  if (std::optional<JsonTextProblem> p = FindJsonTextProblem(text)) {
    if (p->kind == JsonTextProblem::Kind::kDuplicateKey) {
      return Error::Malformed(at + (p->path.empty() ? "" : p->path + ": ") + "key '" + PrintableText(p->key) +
                              "' appears twice");
    }
    if (p->kind == JsonTextProblem::Kind::kTooDeep) {
      return Error::Malformed(at + JsonDepthMessage(*p) + " (expected the answer of Prometheus' /api/v1/query_range)");
    }
    return Error::Malformed(at + "not JSON at " + LineAndColumn(text, p->byte) +
                            (p->path.empty() ? "" : " (in " + p->path + ")") +
                            " (expected the answer of Prometheus' /api/v1/query_range)");
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    return Error::Malformed(at + "not JSON: " + PrintableText(e.what()));
  }
  if (!doc.is_object() || !doc.contains("status")) {
    return Error{at + "expected a Prometheus API answer {\"status\": ..., \"data\": ...}, got " +
                 JsonTypeAndPreview(doc)};
  }
  const json& status = doc["status"];
  if (status == "error") {
    const std::string type =
        doc.contains("errorType") && doc["errorType"].is_string() ? doc["errorType"].get<std::string>() : "?";
    const std::string message =
        doc.contains("error") && doc["error"].is_string() ? doc["error"].get<std::string>() : "?";
    return Error{at + "Prometheus answered an error (errorType '" + PrintableText(type) +
                 "'): " + PrintableText(message, 400)};
  }
  if (status != "success")
    return Error{at + "status: expected \"success\" or \"error\", got " + JsonTypeAndPreview(status)};
  PrometheusMatrix matrix;
  matrix.source = source_name;
  for (const char* key : {"warnings", "infos"}) {
    if (!doc.contains(key)) continue;
    if (!doc[key].is_array())
      return Error{at + key + ": expected a list of strings, got " + JsonTypeAndPreview(doc[key])};
    for (const json& w : doc[key]) {
      matrix.warnings.push_back(std::string("Prometheus: ") +
                                (w.is_string() ? PrintableText(w.get<std::string>(), 400) : JsonTypeAndPreview(w)));
    }
  }
  if (!doc.contains("data") || !doc["data"].is_object()) {
    return Error{at + "data: expected an object {\"resultType\": \"matrix\", \"result\": [...]}"};
  }
  const json& data = doc["data"];
  if (!data.contains("resultType") || !data["resultType"].is_string()) {
    return Error{at + "data.resultType: expected \"matrix\""};
  }
  const std::string type = data["resultType"].get<std::string>();
  if (type != "matrix") {
    if (type == "vector" || type == "scalar" || type == "string") {
      return Error{at + "data.resultType is '" + type +
                   "', an instant query's answer; a time series needs a range query: use /api/v1/query_range "
                   "(with start, end and step), not /api/v1/query"};
    }
    return Error{at + "data.resultType: expected \"matrix\", got '" + PrintableText(type) + "'"};
  }
  if (!data.contains("result") || !data["result"].is_array()) {
    return Error{at + "data.result: expected a list of series"};
  }
  const json& result = data["result"];
  for (size_t i = 0; i < result.size(); ++i) {
    const std::string path = "data.result[" + std::to_string(i) + "]";
    const json& s = result[i];
    if (!s.is_object())
      return Error{at + path + ": expected a series {\"metric\": {...}, \"values\": [...]}, got " +
                   JsonTypeAndPreview(s)};
    PrometheusSeries series;
    if (s.contains("metric")) {
      if (!s["metric"].is_object())
        return Error{at + path + ".metric: expected an object of labels, got " + JsonTypeAndPreview(s["metric"])};
      for (const auto& [name, value] : s["metric"].items()) {
        if (!value.is_string()) {
          return Error{at + path + ".metric." + PrintableText(name, 64) + ": expected a label value (a string), got " +
                       JsonTypeAndPreview(value)};
        }
        if (name.size() > kMaxLabelBytes || value.get_ref<const std::string&>().size() > kMaxLabelBytes) {
          return Error{at + path + ".metric." + PrintableText(name, 64) + ": a label of " +
                       std::to_string(std::max(name.size(), value.get_ref<const std::string&>().size())) +
                       " bytes, more than the " + std::to_string(kMaxLabelBytes) +
                       " a label name or value may have here (a host name has at most 253)"};
        }
        series.labels[name] = value.get<std::string>();
      }
    }
    if (!s.contains("values")) {
      return Error{
          at + path +
          (s.contains("histograms") ? ": native histograms are not read; query a float series" : ": no \"values\"")};
    }
    const json& values = s["values"];
    if (!values.is_array())
      return Error{at + path + ".values: expected a list of [time, \"value\"], got " + JsonTypeAndPreview(values)};
    series.points.reserve(values.size());
    for (size_t k = 0; k < values.size(); ++k) {
      const std::string point = PrometheusPointPath(i, k);
      const json& v = values[k];
      if (!v.is_array() || v.size() != 2)
        return Error{at + point + ": expected [time, \"value\"], got " + JsonTypeAndPreview(v)};
      if (!v[0].is_number())
        return Error{at + point + "[0]: expected a Unix time in seconds (a number), got " + JsonTypeAndPreview(v[0])};
      const double t = v[0].get<double>();
      if (!std::isfinite(t) || t < 0)
        return Error{at + point + "[0]: expected a Unix time >= 0, got " + JsonTypeAndPreview(v[0])};
      if (!v[1].is_string()) {
        return Error{at + point + "[1]: expected the sample value as a string (\"85.5\", \"NaN\", \"+Inf\"), got " +
                     JsonTypeAndPreview(v[1])};
      }
      std::optional<double> value = SampleValue(v[1].get<std::string>());
      if (!value) {
        return Error{at + point + "[1]: expected a number as a string (\"85.5\", \"NaN\", \"+Inf\"), got '" +
                     PrintableText(v[1].get<std::string>()) + "'"};
      }
      if (!series.points.empty() && t <= series.points.back().time_s) {
        return Error{at + point + "[0]: times must increase within a series: " + JsonTypeAndPreview(v[0]) +
                     " is not after the point before"};
      }
      series.points.push_back({t, *value});
    }
    matrix.series.push_back(std::move(series));
  }
  return matrix;
}

Result<PrometheusMatrix> ReadPrometheusMatrix(const std::string& path) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxPrometheusFileBytes);
  if (!text.ok()) return text.error();
  return ParsePrometheusMatrix(*text, path);
}

}  // namespace wattcut::telemetry
