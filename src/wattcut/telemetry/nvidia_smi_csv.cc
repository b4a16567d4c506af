#include "wattcut/telemetry/nvidia_smi_csv.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <vector>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/decimal_text.h"
#include "wattcut/base/iso_time.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/telemetry/telemetry_limits.h"
#include "wattcut/telemetry/text_lines.h"

namespace wattcut::telemetry {
namespace {

// "a, b, c" -> {"a", "b", "c"}: nvidia-smi writes ", " between fields; spaces around are dropped.
std::vector<std::string> SplitFields(std::string_view line) {
  std::vector<std::string> fields;
  size_t from = 0;
  while (true) {
    const size_t comma = line.find(',', from);
    std::string_view field = line.substr(from, comma == std::string_view::npos ? line.size() - from : comma - from);
    while (!field.empty() && field.front() == ' ') field.remove_prefix(1);
    while (!field.empty() && field.back() == ' ') field.remove_suffix(1);
    fields.emplace_back(field);
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return fields;
}

// "power.draw [W]" -> "power.draw"; the unit is in `unit`.
std::string FieldName(const std::string& header_field, std::string* unit) {
  const size_t bracket = header_field.find(" [");
  if (bracket != std::string::npos && header_field.back() == ']') {
    if (unit != nullptr) *unit = header_field.substr(bracket + 2, header_field.size() - bracket - 3);
    return header_field.substr(0, bracket);
  }
  if (unit != nullptr) unit->clear();
  return header_field;
}

// nvidia-smi's words for a value it could not read.
bool NotAReading(const std::string& value) {
  return value == "N/A" || (value.size() >= 2 && value.front() == '[' && value.back() == ']');
}

struct Columns {
  std::vector<std::string> names;  // without units, as header or query gave them
  std::optional<size_t> timestamp, index, uuid, power, clock;
  std::string power_name;
};

// Where the power and the rest are, from the field names.
Result<Columns> FindColumns(std::vector<std::string> names, const std::string& where, const std::string& passed_over) {
  Columns c;
  c.names = std::move(names);
  auto find = [&](const char* name) -> std::optional<size_t> {
    for (size_t i = 0; i < c.names.size(); ++i) {
      if (c.names[i] == name) return i;
    }
    return std::nullopt;
  };
  c.timestamp = find("timestamp");
  c.index = find("index");
  c.uuid = find("uuid");
  c.clock = find("clocks.sm");
  if (!c.clock) c.clock = find("clocks.current.sm");
  for (const char* name : {"power.draw.average", "power.draw", "power.draw.instant"}) {
    if (name == passed_over) continue;
    if (auto p = find(name)) {
      c.power = p;
      c.power_name = name;
      break;
    }
  }
  if (!c.timestamp) {
    return Error{where + "no timestamp field (expected --query-gpu=timestamp,index,power.draw[,...])"};
  }
  if (!c.power) {
    return Error{where +
                 "no power field: expected power.draw.average, power.draw or power.draw.instant among the "
                 "--query-gpu fields"};
  }
  return c;
}

std::string PowerFieldWhy(const Columns& c) {
  auto has = [&](const char* name) {
    for (const std::string& n : c.names) {
      if (n == name) return true;
    }
    return false;
  };
  if (c.power_name == "power.draw.average") {
    return std::string("power.draw.average (a 1 s average") +
           (has("power.draw.instant") ? "; power.draw.instant is also there but is one instant)" : ")");
  }
  if (c.power_name == "power.draw") {
    return std::string(
               "power.draw (a 1 s average on Ampere and newer except GA100, one instant on GA100 (A100) and "
               "older; add power.draw.average to the query for the average on any GPU)") +
           (has("power.draw.instant") ? "; power.draw.instant is also there but is one instant" : "");
  }
  return "power.draw.instant (one instant: neither power.draw.average nor power.draw is in the file)";
}

// "2024/05/01 14:00:00.250" as seconds from 1970-01-01 local; nullopt when it is not that.
std::optional<double> LocalSeconds(const std::string& text) {
  // 0123456789012345678
  // YYYY/MM/DD HH:MM:SS[.mmm]
  if (text.size() < 19 || text[4] != '/' || text[7] != '/' || text[10] != ' ' || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  auto digits = [&](size_t from, size_t count, int64_t& out) {
    out = 0;
    for (size_t i = from; i < from + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int64_t y, mo, d, h, mi, s;
  if (!digits(0, 4, y) || !digits(5, 2, mo) || !digits(8, 2, d) || !digits(11, 2, h) || !digits(14, 2, mi) ||
      !digits(17, 2, s)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, static_cast<int>(mo)) || h > 23 || mi > 59 || s > 59) {
    return std::nullopt;
  }
  double fraction = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20 || text.size() > 29) return std::nullopt;
    double scale = 0.1;
    for (size_t i = 20; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
      fraction += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return static_cast<double>(DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) + fraction;
}

// A value with or without its unit ("85.59 W", "85.59"), as a number.
std::optional<double> ValueWithUnit(const std::string& value, const std::string& unit) {
  std::string_view v = value;
  if (!unit.empty() && v.size() > unit.size() + 1 && v.substr(v.size() - unit.size() - 1) == " " + unit) {
    v.remove_suffix(unit.size() + 1);
  }
  return ParseDecimal(v);
}

}  // namespace

bool LooksLikeNvidiaSmiHeader(const std::string& first_line) {
  const std::vector<std::string> fields = SplitFields(first_line);
  for (const std::string& field : fields) {
    if (FieldName(field, nullptr).rfind("power.draw", 0) == 0) return true;
  }
  if (fields.empty() || fields[0] != "timestamp") return false;
  // "timestamp" first is nvidia-smi's only when every other field is a --query-gpu field: those are
  // dotted (clocks.sm) or one of a few plain words; a serving engine's metrics (vLLM's
  // num_requests_running, vllm:...) are neither.
  static constexpr const char* kPlainFields[] = {
      "index", "uuid", "name", "serial", "count", "pstate", "driver_version", "vbios_version", "persistence_mode"};
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string name = FieldName(fields[i], nullptr);
    if (name.find('.') != std::string::npos) continue;
    if (std::find(std::begin(kPlainFields), std::end(kPlainFields), name) == std::end(kPlainFields)) return false;
  }
  return true;
}

namespace {

// One reading of the file, passing over the power field `passed_over` (none: "").
Result<PowerTelemetry> ParseWithPowerField(const std::string& text, const std::string& source_name,
                                           const NvidiaSmiOptions& options, const std::string& passed_over,
                                           std::string* unreported_field) {
  PowerTelemetry telemetry;
  telemetry.source = source_name;
  telemetry.format = "nvidia-smi";
  const std::string server = options.server.empty() ? "server" : options.server;
  const LocalTimeZone zone = options.time_zone ? *options.time_zone : LocalTimeZone::Utc();
  if (!options.time_zone) {
    telemetry.notes.push_back(
        "nvidia-smi writes local time; no UTC offset or time zone was given, so the "
        "timestamps were taken as UTC (--utc-offset or --time-zone says what they mean)");
  }

  TextLines lines(text);
  TextLine line;
  std::vector<TextLine> pending;  // the first line when it is data (noheader)
  std::optional<Columns> columns;
  std::string header_text;
  // The first non-blank line: the header, or data when the query was given and it is not one.
  while (lines.Next(line)) {
    if (line.text.empty()) continue;
    std::vector<std::string> fields = SplitFields(line.text);
    const bool is_header =
        LooksLikeNvidiaSmiHeader(std::string(line.text)) ||
        (!fields.empty() && !fields[0].empty() && std::isalpha(static_cast<unsigned char>(fields[0][0])));
    std::vector<std::string> names;
    for (const std::string& f : fields) names.push_back(FieldName(f, nullptr));
    if (!options.query.empty()) {
      std::vector<std::string> query;
      for (std::string& q : SplitFields(options.query)) query.push_back(FieldName(q, nullptr));
      if (is_header && query != names) {
        return Error{source_name + ":" + std::to_string(line.number) + ": the header names the fields '" +
                     PrintableText(std::string(line.text)) + "', not the query's '" + PrintableText(options.query) +
                     "'"};
      }
      names = query;
      if (!is_header) pending.push_back(line);
    } else if (!is_header) {
      return Error{source_name + ":" + std::to_string(line.number) + ": expected nvidia-smi's header ('timestamp, " +
                   "index, power.draw [W], ...'), got '" + PrintableText(std::string(line.text)) +
                   "'; a file written with --format=csv,noheader needs its fields passed (--query "
                   "timestamp,index,power.draw, as given to --query-gpu)"};
    }
    if (is_header) header_text = std::string(line.text);
    Result<Columns> c = FindColumns(names, source_name + ":" + std::to_string(line.number) + ": ", passed_over);
    if (!c.ok()) return c.error();
    columns = *c;
    break;
  }
  if (!columns) return Error{source_name + ": empty file (expected nvidia-smi --query-gpu CSV output)"};
  const Columns& c = *columns;
  telemetry.power_field = PowerFieldWhy(c);

  struct Gpu {
    size_t series;
    int last_line;
  };
  std::map<std::string, Gpu> gpus;
  int power_not_read = 0, clock_not_read = 0, headers_repeated = 0;
  bool cut_short = false;
  ZoneScope scope(zone);
  auto where = [&](const TextLine& l, size_t column) {
    return source_name + ":" + std::to_string(l.number) + ": column '" + PrintableText(c.names[column]) + "': ";
  };

  auto read_row = [&](const TextLine& l) -> Status {
    if (l.text.empty()) return Status::Ok();
    if (!header_text.empty() && l.text == header_text) {
      ++headers_repeated;
      return Status::Ok();
    }
    if (!l.terminated) {
      // nvidia-smi ends every line; one without an end was cut off, even if what is left parses.
      cut_short = true;
      return Status::Ok();
    }
    std::vector<std::string> fields = SplitFields(l.text);
    if (fields.size() != c.names.size()) {
      return Error{source_name + ":" + std::to_string(l.number) + ": expected " + std::to_string(c.names.size()) +
                   " fields separated by ', ' (the header's), got " + std::to_string(fields.size()) + ": '" +
                   PrintableText(std::string(l.text)) + "'"};
    }
    const std::string& stamp = fields[*c.timestamp];
    std::optional<double> local = LocalSeconds(stamp);
    if (!local) {
      return Error{where(l, *c.timestamp) + "expected nvidia-smi's local time 'YYYY/MM/DD HH:MM:SS.mmm', got '" +
                   PrintableText(stamp) + "'"};
    }
    std::string id = "0";
    if (c.index) {
      id = fields[*c.index];
      if (id.empty() || id.size() > 4 || id.find_first_not_of("0123456789") != std::string::npos) {
        return Error{where(l, *c.index) + "expected a GPU index (0, 1, ...), got '" + PrintableText(id) + "'"};
      }
    } else if (c.uuid) {
      id = fields[*c.uuid];
      if (id.empty() || id.size() > 96 || NotAReading(id)) {
        return Error{where(l, *c.uuid) + "expected a GPU UUID ('GPU-...'), got '" + PrintableText(id) + "'"};
      }
    }
    std::optional<double> power;
    const std::string& power_text = fields[*c.power];
    if (NotAReading(power_text)) {
      ++power_not_read;
    } else {
      power = ValueWithUnit(power_text, "W");
      if (!power || *power < 0 || *power > kMaxGpuPowerW) {
        return Error{where(l, *c.power) + "expected a GPU's power in watts ('85.59 W' or '85.59', >= 0, at most " +
                     std::to_string(static_cast<int>(kMaxGpuPowerW)) + "), got '" + PrintableText(power_text) + "'"};
      }
    }
    double clock = kUnknownClockMhz;
    if (c.clock) {
      const std::string& clock_text = fields[*c.clock];
      if (NotAReading(clock_text)) {
        ++clock_not_read;
      } else {
        std::optional<double> mhz = ValueWithUnit(clock_text, "MHz");
        if (!mhz || *mhz < 0 || *mhz > kMaxSmClockMhz) {
          return Error{where(l, *c.clock) + "expected the SM clock in MHz ('1410 MHz' or '1410'), got '" +
                       PrintableText(clock_text) + "'"};
        }
        clock = *mhz;
      }
    }

    auto it = gpus.find(id);
    if (it == gpus.end()) {
      if (gpus.size() >= 1024) return Error{where(l, c.index ? *c.index : *c.uuid) + "more than 1024 GPUs in one file"};
      it = gpus.emplace(id, Gpu{telemetry.gpus.size(), 0}).first;
      telemetry.gpus.push_back({server, id, {}});
    }
    GpuPowerSeries& series = telemetry.gpus[it->second.series];
    const std::optional<double> previous =
        series.samples.empty() ? std::nullopt : std::optional<double>(series.samples.back().time_s);
    std::vector<double> instants = scope.Instants(*local);
    if (instants.empty()) {
      return Error{where(l, *c.timestamp) + "local time '" + PrintableText(stamp) + "' does not exist in " +
                   zone.description() + " (the clocks went forward over it); was the file written in another zone?"};
    }
    double when = instants.front();
    if (previous && when <= *previous && instants.size() > 1) when = instants.back();
    if (previous && when <= *previous) {
      if (!c.index && !c.uuid && when == *previous) {
        return Error{where(l, *c.timestamp) + "a second reading at '" + PrintableText(stamp) + "' (line " +
                     std::to_string(it->second.last_line) +
                     " has one) and no index or uuid field to tell GPUs apart: add index to --query-gpu"};
      }
      return Error{where(l, *c.timestamp) + "GPU " + PrintableText(id) + "'s readings must be in increasing time: '" +
                   PrintableText(stamp) + "' is " + (when == *previous ? "the same time as" : "earlier than") +
                   " its reading on line " + std::to_string(it->second.last_line)};
    }
    if (!power) return Status::Ok();
    series.samples.push_back({when, *power, clock});
    it->second.last_line = l.number;
    return Status::Ok();
  };

  for (const TextLine& l : pending) {
    if (Status s = read_row(l); !s.ok()) return s.error();
  }
  while (lines.Next(line)) {
    if (Status s = read_row(line); !s.ok()) return s.error();
  }

  size_t readings = 0;
  for (const GpuPowerSeries& g : telemetry.gpus) readings += g.samples.size();
  if (readings == 0) {
    if (power_not_read > 0 && unreported_field) *unreported_field = c.power_name;
    return Error{source_name + ": no power readings" +
                 (power_not_read > 0 ? " (all " + std::to_string(power_not_read) + " were " + c.power_name +
                                           " N/A: this GPU or driver does not report it; try power.draw)"
                                     : " after the header")};
  }
  if (power_not_read > 0) {
    telemetry.notes.push_back(source_name + ": " + std::to_string(power_not_read) + " " + c.power_name +
                              " values were not readings ([N/A], [Not Supported], ...) and were skipped");
  }
  if (clock_not_read > 0) {
    telemetry.notes.push_back(source_name + ": " + std::to_string(clock_not_read) + " " + c.names[*c.clock] +
                              " values were not readings; those samples have no clock");
  }
  if (headers_repeated > 0) {
    telemetry.notes.push_back(source_name + ": the header was repeated " + std::to_string(headers_repeated) +
                              " times (recordings appended to one file) and skipped");
  }
  if (cut_short) {
    telemetry.notes.push_back(source_name + ": the last line has no line end (nvidia-smi stopped while writing it) " +
                              "and was skipped");
  }
  if (options.time_zone) {
    telemetry.notes.push_back("nvidia-smi's timestamps were read as local time in " + zone.description());
  }
  SortSeries(telemetry);
  return telemetry;
}

}  // namespace

Result<PowerTelemetry> ParseNvidiaSmiCsv(const std::string& text, const std::string& source_name,
                                         const NvidiaSmiOptions& options) {
  std::string unreported;
  Result<PowerTelemetry> first = ParseWithPowerField(text, source_name, options, "", &unreported);
  if (first.ok() || unreported.empty() || unreported == "power.draw.instant") return first;
  // The preferred field was not a reading in any row (GA100 and older GPUs have no
  // power.draw.average): the next power field of the file, said so.
  Result<PowerTelemetry> next = ParseWithPowerField(text, source_name, options, unreported, nullptr);
  if (!next.ok()) return first;
  next->notes.push_back(source_name + ": " + unreported + " was not a reading in any row (this GPU or driver does " +
                        "not report it): " + next->power_field.substr(0, next->power_field.find(' ')) +
                        " was read instead");
  return next;
}

Result<PowerTelemetry> ReadNvidiaSmiCsv(const std::string& path, const NvidiaSmiOptions& options) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTelemetryFileBytes);
  if (!text.ok()) return text.error();
  NvidiaSmiOptions o = options;
  if (o.server.empty()) o.server = std::filesystem::path(path).stem().string();
  return ParseNvidiaSmiCsv(*text, path, o);
}

}  // namespace wattcut::telemetry
