#include "wattcut/telemetry/nvidia_smi_csv_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/printable_text.h"

namespace wattcut::telemetry {
namespace {

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  return s.substr(a, b - a);
}

// "power.draw [W]" -> "power.draw".
std::string FieldName(const std::string& header) {
  std::string t = Trim(header);
  const size_t bracket = t.find(" [");
  return bracket == std::string::npos ? t : t.substr(0, bracket);
}

bool NotAvailable(const std::string& v) { return v == "[N/A]" || v == "N/A" || v == "[Not Supported]"; }

// "85.59 W" / "85.59" (nounits) -> 85.59; `unit` is "W" or "MHz".
std::optional<double> Quantity(const std::string& v, const std::string& unit) {
  std::string t = v;
  if (t.size() > unit.size() + 1 && t.compare(t.size() - unit.size() - 1, std::string::npos, " " + unit) == 0) {
    t = t.substr(0, t.size() - unit.size() - 1);
  }
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(d) || d < 0) return std::nullopt;
  return d;
}

// "2024/05/10 14:03:21.250" -> seconds since 1970 as if UTC.
std::optional<double> LocalTimestamp(const std::string& v) {
  int y, mo, d, h, mi, s, ms = 0, n = 0;
  if (std::sscanf(v.c_str(), "%4d/%2d/%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6) return std::nullopt;
  std::string rest = v.substr(static_cast<size_t>(n));
  double frac = 0;
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[i] < '0' || rest[i] > '9') return std::nullopt;
    }
    frac = std::strtod(("0" + rest).c_str(), nullptr);
  }
  (void)ms;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const time_t t = timegm(&tm);
  return static_cast<double>(t) + frac;
}

// "node-a.nvidia-smi.csv" -> "node-a": the file name up to its first dot.
std::string Stem(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t dot = name.find('.', 1);
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

Result<int> ParseUtcOffset(const std::string& text) {
  if (text == "Z" || text == "UTC" || text == "+00:00" || text == "-00:00") return 0;
  int h = 0, m = 0;
  char sign = 0;
  int n = 0;
  if (text.size() == 6 && std::sscanf(text.c_str(), "%c%2d:%2d%n", &sign, &h, &m, &n) == 3 && n == 6 &&
      (sign == '+' || sign == '-') && h <= 14 && m <= 59 && std::isdigit(static_cast<unsigned char>(text[1])) &&
      std::isdigit(static_cast<unsigned char>(text[4]))) {
    return (sign == '-' ? -1 : 1) * (h * 60 + m);
  }
  return Error{"--utc-offset: expected +HH:MM, -HH:MM or Z (the offset of the local time nvidia-smi printed), got '" +
               PrintableText(text) + "'"};
}

bool LooksLikeNvidiaSmiCsv(const std::string& text) {
  const std::string first = text.substr(0, std::min<size_t>(text.find('\n'), 512));
  return first.rfind("timestamp", 0) == 0 && first.find("power.draw") != std::string::npos;
}

Result<PowerTelemetry> ParseNvidiaSmiCsv(const std::string& text, const std::string& source_name,
                                         const NvidiaSmiReadOptions& options) {
  PowerTelemetry out;
  out.source = source_name;
  out.format = "nvidia-smi";
  const std::string server = options.server.empty() ? Stem(source_name) : options.server;
  std::optional<size_t> time_col, index_col, uuid_col, clock_col, power_col;
  std::string power_field;
  int not_available = 0;
  std::map<std::string, GpuPowerSeries> by_gpu;
  const double offset_s = options.utc_offset_minutes.value_or(0) * 60.0;

  auto on_header = [&](const CsvTable& table) -> Status {
    std::map<std::string, size_t> names;
    for (size_t i = 0; i < table.header().size(); ++i) names[FieldName(table.header()[i])] = i;
    auto find = [&](const std::string& n) -> std::optional<size_t> {
      auto it = names.find(n);
      return it == names.end() ? std::nullopt : std::optional<size_t>(it->second);
    };
    time_col = find("timestamp");
    if (!time_col) {
      return Error{source_name + ":1: expected nvidia-smi's header (timestamp, index, uuid, power.draw ...), got '" +
                   PrintableText(table.header().empty() ? "" : table.header()[0]) +
                   "'; a --format=csv,noheader file cannot be read: record with --format=csv"};
    }
    index_col = find("index");
    uuid_col = find("uuid");
    clock_col = find("clocks.sm");
    if (!clock_col) clock_col = find("clocks.current.sm");
    if ((power_col = find("power.draw.average"))) {
      power_field = "power.draw.average (NVML's 1 s average)";
    } else if ((power_col = find("power.draw"))) {
      power_field = "power.draw (a 1 s average on Ampere and newer, an instant reading before)";
    } else if ((power_col = find("power.draw.instant"))) {
      power_field = "power.draw.instant (one instant per sample; no power.draw or power.draw.average in the file)";
    } else {
      return Error{source_name + ":1: no power column: expected power.draw, power.draw.average or power.draw.instant " +
                   "in --query-gpu"};
    }
    if (find("power.draw.average") && find("power.draw.instant")) {
      power_field += "; power.draw.instant is in the file too, but one instant per sample misses what happens between";
    }
    return Status{};
  };
  auto on_row = [&](const CsvTable& table, CsvRow& row) -> Status {
    auto field = [&](size_t c) { return Trim(row.fields[c]); };
    const std::string ts = field(*time_col);
    const std::optional<double> local = LocalTimestamp(ts);
    if (!local) {
      return Error{table.where(row, *time_col) + "expected nvidia-smi's 'YYYY/MM/DD HH:MM:SS.mmm', got '" +
                   PrintableText(ts) + "'"};
    }
    std::string gpu = index_col ? field(*index_col) : uuid_col ? field(*uuid_col) : "0";
    if (gpu.empty()) return Error{table.where(row, index_col ? *index_col : *uuid_col) + "empty GPU id"};
    const std::string pv = field(*power_col);
    if (NotAvailable(pv)) {
      ++not_available;
      return Status{};
    }
    const std::optional<double> power = Quantity(pv, "W");
    if (!power || *power > 100000) {
      return Error{table.where(row, *power_col) + "expected watts like '85.59 W' (0 to 100000), got '" +
                   PrintableText(pv) + "'"};
    }
    GpuPowerSample s;
    s.time_s = *local - offset_s;
    s.power_w = *power;
    if (clock_col) {
      const std::string cv = field(*clock_col);
      if (!NotAvailable(cv)) {
        const std::optional<double> clock = Quantity(cv, "MHz");
        if (!clock || *clock > 10000) {
          return Error{table.where(row, *clock_col) + "expected a clock like '1410 MHz', got '" + PrintableText(cv) +
                       "'"};
        }
        s.sm_clock_mhz = *clock;
      }
    }
    GpuPowerSeries& series = by_gpu[gpu];
    if (series.gpu.empty()) {
      series.server = server;
      series.gpu = gpu;
    }
    if (!series.samples.empty() && !(s.time_s > series.samples.back().time_s)) {
      return Error{table.where(row, *time_col) + "GPU " + PrintableText(gpu) +
                   ": expected a time after its previous reading, got '" + PrintableText(ts) + "'" +
                   (index_col || uuid_col ? "" : " (no index or uuid column: one GPU per file)")};
    }
    series.samples.push_back(s);
    return Status{};
  };
  if (Status st = CsvTable::ForEachRow(text, source_name, on_header, on_row); !st.ok()) return st.error();
  if (by_gpu.empty()) return Error{source_name + ": no readings"};
  out.power_field = power_field;
  for (auto& [id, series] : by_gpu) out.gpus.push_back(std::move(series));
  std::sort(out.gpus.begin(), out.gpus.end(), [](const GpuPowerSeries& a, const GpuPowerSeries& b) {
    const bool na = !a.gpu.empty() && std::all_of(a.gpu.begin(), a.gpu.end(), ::isdigit);
    const bool nb = !b.gpu.empty() && std::all_of(b.gpu.begin(), b.gpu.end(), ::isdigit);
    if (na && nb) return std::stoll(a.gpu) < std::stoll(b.gpu);
    return a.gpu < b.gpu;
  });
  if (not_available > 0) {
    out.notes.push_back(std::to_string(not_available) + " readings of " + power_field.substr(0, power_field.find(' ')) +
                        " were [N/A] or [Not Supported] and were skipped");
  }
  if (!options.utc_offset_minutes) {
    out.notes.push_back("nvidia-smi prints local time: no --utc-offset was given, so the timestamps were taken as UTC");
  }
  return out;
}

Result<PowerTelemetry> ReadNvidiaSmiCsv(const std::string& path, const NvidiaSmiReadOptions& options) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTelemetryFileBytes);
  if (!text.ok()) return text.error();
  return ParseNvidiaSmiCsv(*text, path, options);
}

}  // namespace wattcut::telemetry
