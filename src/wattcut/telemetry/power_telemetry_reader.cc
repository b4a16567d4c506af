#include "wattcut/telemetry/power_telemetry_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/agent_readings_stream.h"
#include "wattcut/telemetry/nvidia_smi_csv.h"
#include "wattcut/telemetry/prometheus_matrix.h"
#include "wattcut/telemetry/prometheus_power.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::telemetry {
namespace {

namespace fs = std::filesystem;

std::string FormatDescription(PowerFormat format) {
  switch (format) {
    case PowerFormat::kNvidiaSmi:
      return "nvidia-smi CSV";
    case PowerFormat::kPrometheus:
      return "Prometheus JSON";
    case PowerFormat::kAgent:
      return "the agent's readings stream (NDJSON)";
    case PowerFormat::kWattcut:
      return "wattcut's time,server,power_w CSV";
    case PowerFormat::kAuto:
      break;
  }
  return "auto";
}

// The first 4 KiB of a file.
Result<std::string> Head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::NotFound(path + ": cannot open file for reading");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// The files `path` stands for: itself, or a folder's regular non-hidden files in name order.
Result<std::vector<std::string>> Files(const std::string& path, bool* folder) {
  std::error_code ec;
  *folder = fs::is_directory(path, ec);
  if (!*folder) {
    if (!fs::exists(path, ec)) return Error::NotFound(path + ": no such file or folder");
    return std::vector<std::string>{path};
  }
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (!it->is_regular_file(ec)) continue;
    files.push_back(it->path().string());
    if (files.size() > static_cast<size_t>(kMaxTelemetryFiles)) {
      return Error{path + ": more than " + std::to_string(kMaxTelemetryFiles) + " files (a row's servers at most)"};
    }
  }
  if (ec) return Error::IOError(path + ": cannot list the folder: " + ec.message());
  if (files.empty()) return Error{path + ": the folder holds no telemetry files (hidden files are skipped)"};
  std::sort(files.begin(), files.end());
  return files;
}

Result<DetectedFormat> DetectFile(const std::string& file) {
  Result<std::string> head = Head(file);
  if (!head.ok()) return head.error();
  std::optional<DetectedFormat> d = DetectPowerFormat(*head);
  if (!d) {
    const std::string first = head->substr(0, head->find('\n'));
    return Error{file + ": not a power telemetry format read here (its first line is '" + PrintableText(first) +
                 "'): expected nvidia-smi --query-gpu CSV, a Prometheus query_range answer, the agent's readings "
                 "stream, or wattcut's time,server,power_w CSV"};
  }
  return *d;
}

}  // namespace

Result<PowerFormat> ParsePowerFormat(const std::string& text) {
  for (PowerFormat f : {PowerFormat::kAuto, PowerFormat::kWattcut, PowerFormat::kNvidiaSmi, PowerFormat::kPrometheus,
                        PowerFormat::kAgent}) {
    if (text == PowerFormatName(f)) return f;
  }
  return Error{"expected a power format auto, wattcut, nvidia-smi, prometheus or agent, got '" + PrintableText(text) +
               "'"};
}

std::string PowerFormatName(PowerFormat format) {
  switch (format) {
    case PowerFormat::kAuto:
      return "auto";
    case PowerFormat::kWattcut:
      return "wattcut";
    case PowerFormat::kNvidiaSmi:
      return "nvidia-smi";
    case PowerFormat::kPrometheus:
      return "prometheus";
    case PowerFormat::kAgent:
      return "agent";
  }
  return "auto";
}

std::optional<DetectedFormat> DetectPowerFormat(const std::string& head) {
  std::string text = head;
  if (text.rfind("\xef\xbb\xbf", 0) == 0) text.erase(0, 3);
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return std::nullopt;
  text.erase(0, start);
  std::string first = text.substr(0, text.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  const std::string shown = PrintableText(first, 40);
  if (text[0] == '{') {
    // The first key decides: Prometheus answers start with "status"; the agent writes its keys in
    // name order, so a reading starts with "gpus" ("time_s" first is accepted too).
    const size_t quote = text.find('"');
    const size_t end = quote == std::string::npos ? quote : text.find('"', quote + 1);
    const std::string key = end == std::string::npos ? "" : text.substr(quote + 1, end - quote - 1);
    if (key == "status") return DetectedFormat{PowerFormat::kPrometheus, "it starts '" + shown + "'"};
    if (key == "gpus" || key == "time_s") return DetectedFormat{PowerFormat::kAgent, "it starts '" + shown + "'"};
    return std::nullopt;
  }
  if (LooksLikeNvidiaSmiHeader(first)) return DetectedFormat{PowerFormat::kNvidiaSmi, "header '" + shown + "'"};
  if (first.rfind("time,server,power_w", 0) == 0)
    return DetectedFormat{PowerFormat::kWattcut, "header '" + shown + "'"};
  return std::nullopt;
}

Result<PowerFormat> DetectPowerFormatOf(const std::string& path) {
  bool folder = false;
  Result<std::vector<std::string>> files = Files(path, &folder);
  if (!files.ok()) return files.error();
  std::optional<DetectedFormat> first;
  std::string first_file;
  for (const std::string& file : *files) {
    Result<DetectedFormat> d = DetectFile(file);
    if (!d.ok()) return d.error();
    if (!first) {
      first = *d;
      first_file = file;
    } else if (d->format != first->format) {
      return Error{path + ": a folder of mixed formats: " + first_file + " is " + FormatDescription(first->format) +
                   ", " + file + " is " + FormatDescription(d->format) + "; give one format's files"};
    }
  }
  return first->format;
}

Result<PowerTelemetry> ReadPowerTelemetry(const std::string& path, PowerFormat format,
                                          const PowerReadOptions& options) {
  bool folder = false;
  Result<std::vector<std::string>> files = Files(path, &folder);
  if (!files.ok()) return files.error();
  if (format == PowerFormat::kAuto) {
    Result<PowerFormat> detected = DetectPowerFormatOf(path);
    if (!detected.ok()) return detected.error();
    format = *detected;
  } else {
    // A file of another format is refused by name rather than read as noise.
    for (const std::string& file : *files) {
      Result<std::string> head = Head(file);
      if (!head.ok()) return head.error();
      std::optional<DetectedFormat> d = DetectPowerFormat(*head);
      if (d && d->format != format) {
        return Error{file + " looks like " + FormatDescription(d->format) + " (" + d->evidence + "), not " +
                     FormatDescription(format)};
      }
    }
  }
  if (format == PowerFormat::kWattcut) {
    return Error{path + " is wattcut's time,server,power_w CSV: polca reads that format itself (polca/power_trace.h)"};
  }
  if (folder && !options.server.empty() && files->size() > 1) {
    return Error{path + ": a server name was given for a folder of " + std::to_string(files->size()) +
                 " files; each file's name is its server"};
  }
  PowerTelemetry all;
  all.source = path;
  all.format = PowerFormatName(format);
  std::set<std::pair<std::string, std::string>> gpus_seen;
  std::set<std::string> servers_seen;
  for (const std::string& file : *files) {
    Result<PowerTelemetry> one = Error{""};
    if (format == PowerFormat::kNvidiaSmi) {
      NvidiaSmiOptions o;
      o.server = options.server;
      o.query = options.nvidia_smi_query;
      o.time_zone = options.time_zone;
      one = ReadNvidiaSmiCsv(file, o);
    } else if (format == PowerFormat::kAgent) {
      one = ReadAgentReadingsStream(file, options.server);
    } else {
      Result<PrometheusMatrix> matrix = ReadPrometheusMatrix(file);
      if (!matrix.ok()) return matrix.error();
      one = PowerFromPrometheus(*matrix, {options.server_label, options.server_power_metric});
    }
    if (!one.ok()) return one.error();
    if (all.power_field.empty()) all.power_field = one->power_field;
    for (GpuPowerSeries& g : one->gpus) {
      if (!gpus_seen.insert({g.server, g.gpu}).second) {
        return Error{file + ": server '" + PrintableText(g.server) + "' GPU " + PrintableText(g.gpu) +
                     " is also in another file of " + path + "; each server's readings belong in one file"};
      }
      all.gpus.push_back(std::move(g));
    }
    for (ServerPowerSeries& s : one->servers) {
      if (!servers_seen.insert(s.server).second) {
        return Error{file + ": server '" + PrintableText(s.server) + "' is also in another file of " + path};
      }
      all.servers.push_back(std::move(s));
    }
    for (std::string& n : one->notes) {
      // The no-time-zone note is the same for every file of a folder: said once.
      if (std::find(all.notes.begin(), all.notes.end(), n) == all.notes.end()) all.notes.push_back(std::move(n));
    }
  }
  SortSeries(all);
  return all;
}

}  // namespace wattcut::telemetry
