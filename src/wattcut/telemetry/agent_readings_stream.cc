#include "wattcut/telemetry/agent_readings_stream.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/general_text.h"
#include "wattcut/base/json_preview.h"
#include "wattcut/base/json_text_check.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/telemetry_limits.h"
#include "wattcut/telemetry/text_lines.h"

namespace wattcut::telemetry {
namespace {

using json = nlohmann::json;

}  // namespace

Result<PowerTelemetry> ParseAgentReadingsStream(const std::string& text, const std::string& source_name,
                                                const std::string& server_name) {
  PowerTelemetry telemetry;
  telemetry.source = source_name;
  telemetry.format = "agent";
  telemetry.power_field =
      "the agent's gpus[].power_w (NVML's power usage); server.power_w where its source is \"redfish\"";
  const std::string server = server_name.empty() ? "server" : server_name;
  std::map<int64_t, size_t> gpu_series;
  ServerPowerSeries measured{server, {}};
  std::optional<double> previous_time;
  int previous_line = 0, null_power = 0, model_server = 0, null_server = 0, lines_read = 0;
  bool cut_short = false;

  TextLines lines(text);
  TextLine line;
  while (lines.Next(line)) {
    if (line.text.empty()) continue;
    if (!line.terminated) {
      cut_short = true;
      break;
    }
    const std::string at = source_name + ":" + std::to_string(line.number) + ": ";
    if (std::optional<JsonTextProblem> p = FindJsonTextProblem(line.text)) {
      if (p->kind == JsonTextProblem::Kind::kDuplicateKey) {
        return Error::Malformed(at + p->path + ": key '" + PrintableText(p->key) + "' appears twice");
      }
      if (p->kind == JsonTextProblem::Kind::kTooDeep) {
        return Error::Malformed(at + JsonDepthMessage(*p) +
                                " (expected one reading of the agent's /v1/readings/stream a line)");
      }
      return Error::Malformed(at + "not JSON at column " + std::to_string(p->byte + 1) +
                              " (expected one reading of the agent's /v1/readings/stream a line): '" +
                              PrintableText(line.text) + "'");
    }
    json doc;
    try {
      doc = json::parse(line.text);
    } catch (const json::exception& e) {
      return Error::Malformed(at + "not JSON: " + PrintableText(e.what()));
    }
    if (!doc.is_object())
      return Error{at + "expected an object {\"time_s\": ..., \"gpus\": [...]}, got " + JsonTypeAndPreview(doc)};
    if (!doc.contains("time_s") || !doc["time_s"].is_number()) {
      return Error{at + "time_s: expected Unix seconds (a number), got " +
                   (doc.contains("time_s") ? JsonTypeAndPreview(doc["time_s"]) : std::string("nothing"))};
    }
    const double time_s = doc["time_s"].get<double>();
    if (!std::isfinite(time_s) || time_s < 0)
      return Error{at + "time_s: expected Unix seconds >= 0, got " + JsonTypeAndPreview(doc["time_s"])};
    if (previous_time && time_s <= *previous_time) {
      return Error{at + "time_s: readings must be in increasing time: " + GeneralText(time_s) + " is " +
                   (time_s == *previous_time ? "the same as" : "earlier than") + " line " +
                   std::to_string(previous_line) + "'s"};
    }
    previous_time = time_s;
    previous_line = line.number;
    ++lines_read;
    if (!doc.contains("gpus") || !doc["gpus"].is_array()) {
      return Error{at + "gpus: expected a list of GPU readings, got " +
                   (doc.contains("gpus") ? JsonTypeAndPreview(doc["gpus"]) : std::string("nothing"))};
    }
    const json& gpus = doc["gpus"];
    for (size_t i = 0; i < gpus.size(); ++i) {
      const std::string path = at + "gpus[" + std::to_string(i) + "]";
      const json& g = gpus[i];
      if (!g.is_object()) return Error{path + ": expected a GPU reading (an object), got " + JsonTypeAndPreview(g)};
      if (!g.contains("index") || !g["index"].is_number_integer() || g["index"].get<int64_t>() < 0 ||
          g["index"].get<int64_t>() > 1023) {
        return Error{path + ".index: expected a GPU index 0-1023, got " +
                     (g.contains("index") ? JsonTypeAndPreview(g["index"]) : std::string("nothing"))};
      }
      const int64_t index = g["index"].get<int64_t>();
      const json power = g.contains("power_w") ? g["power_w"] : json();
      if (power.is_null()) {
        ++null_power;
        continue;
      }
      if (!power.is_number() || power.get<double>() < 0 || power.get<double>() > kMaxGpuPowerW) {
        return Error{path + ".power_w: expected watts >= 0 and at most " + GeneralText(kMaxGpuPowerW) +
                     " or null, got " + JsonTypeAndPreview(power)};
      }
      double clock = kUnknownClockMhz;
      if (g.contains("sm_clock_mhz") && !g["sm_clock_mhz"].is_null()) {
        const json& c = g["sm_clock_mhz"];
        if (!c.is_number() || c.get<double>() < 0 || c.get<double>() > kMaxSmClockMhz) {
          return Error{path + ".sm_clock_mhz: expected MHz >= 0 or null, got " + JsonTypeAndPreview(c)};
        }
        clock = c.get<double>();
      }
      auto it = gpu_series.find(index);
      if (it == gpu_series.end()) {
        it = gpu_series.emplace(index, telemetry.gpus.size()).first;
        telemetry.gpus.push_back({server, std::to_string(index), {}});
      }
      GpuPowerSeries& series = telemetry.gpus[it->second];
      if (!series.samples.empty() && series.samples.back().time_s == time_s) {
        return Error{path + ".index: GPU " + std::to_string(index) + " appears twice in one reading"};
      }
      series.samples.push_back({time_s, power.get<double>(), clock});
    }
    if (!doc.contains("server") || doc["server"].is_null()) {
      ++null_server;
      continue;
    }
    const json& s = doc["server"];
    if (!s.is_object())
      return Error{at + "server: expected the server's power (an object) or null, got " + JsonTypeAndPreview(s)};
    const json source = s.contains("source") ? s["source"] : json();
    if (source == "model") {
      ++model_server;
      continue;
    }
    if (source != "redfish")
      return Error{at + "server.source: expected \"redfish\" or \"model\", got " + JsonTypeAndPreview(source)};
    const json power = s.contains("power_w") ? s["power_w"] : json();
    if (!power.is_number() || power.get<double>() < 0 || power.get<double>() > kMaxServerPowerW) {
      return Error{at + "server.power_w: expected watts >= 0 and at most " + GeneralText(kMaxServerPowerW) + ", got " +
                   JsonTypeAndPreview(power)};
    }
    measured.samples.push_back({time_s, power.get<double>()});
  }
  if (lines_read == 0) {
    return Error{source_name + ": no readings" + (cut_short ? " (only a line cut short)" : "") +
                 " (expected the agent's /v1/readings/stream, one JSON object a line)"};
  }
  if (!measured.samples.empty()) telemetry.servers.push_back(std::move(measured));
  if (telemetry.gpus.empty() && telemetry.servers.empty()) {
    return Error{source_name + ": no power readings: every GPU's power_w is null (see each reading's errors)"};
  }
  if (null_power > 0) {
    telemetry.notes.push_back(source_name + ": " + std::to_string(null_power) +
                              " GPU readings had no power (power_w null; the agent's errors say why) and were skipped");
  }
  if (model_server > 0) {
    telemetry.notes.push_back(source_name + ": " + std::to_string(model_server) +
                              " server powers were the agent's model estimate (source \"model\"), not a "
                              "measurement, and were not read");
  }
  if (cut_short) {
    telemetry.notes.push_back(source_name +
                              ": the last line has no line end (the recording stopped mid-line) and "
                              "was skipped");
  }
  SortSeries(telemetry);
  return telemetry;
}

Result<PowerTelemetry> ReadAgentReadingsStream(const std::string& path, const std::string& server) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTelemetryFileBytes);
  if (!text.ok()) return text.error();
  return ParseAgentReadingsStream(*text, path, server.empty() ? std::filesystem::path(path).stem().string() : server);
}

}  // namespace wattcut::telemetry
