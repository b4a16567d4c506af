#include "wattcut/polca/power_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "wattcut/base/csv_reader.h"
#include "wattcut/base/order_statistics.h"
#include "wattcut/base/printable_text.h"
#include "wattcut/polca/request_trace.h"
#include "wattcut/polca/row_limits.h"
#include "wattcut/telemetry/telemetry_limits.h"

namespace wattcut::polca {
namespace {

constexpr const char* kHeader = "time,server,power_w[,priority]";

// What a file that is not a power trace looks like it is, for the missing-column message.
std::string FormatHint(const std::vector<std::string>& header) {
  const std::string first = header.empty() ? "" : header.front();
  if (first.rfind("\x1f\x8b", 0) == 0) return ": this is a gzip file; decompress it first (gunzip)";
  for (const std::string& name : header) {
    if (name.rfind("power.draw", 0) == 0 || name == "timestamp") {
      return ": this looks like nvidia-smi --query-gpu output (one GPU a row); polca replay takes one row per "
             "server reading: time, the server's name, its whole power in watts";
    }
    if (name.rfind("DCGM_FI_", 0) == 0) {
      return ": this looks like a DCGM export (one GPU a series); polca replay takes one row per server reading";
    }
  }
  return "";
}

}  // namespace

Result<PowerTrace> PowerTrace::Read(const std::string& path) {
  Result<std::string> text = CsvTable::ReadText(path, kMaxTraceFileBytes);
  if (!text.ok()) return text.error();
  return Parse(*text, path);
}

// Reads the trace one row at a time (CsvTable::ForEachRow): what it keeps is the readings,
// 16 bytes each, not the table's 200 bytes a row.
struct PowerTrace::Builder {
  PowerTrace trace;
  size_t columns[3] = {0, 0, 0};
  std::optional<size_t> priority_column;
  struct Seen {
    size_t index;
    int last_line;
    int priority_line;
  };
  std::map<std::string, Seen> seen;
  bool iso = false;
  double origin = 0;  // absolute time of the first row, subtracted to keep precision
  double first = 0, last = 0;
  size_t rows = 0;

  Status Header(const CsvTable& t) {
    trace.name_ = t.source_name();
    const char* kColumns[] = {"time", "server", "power_w"};
    for (int i = 0; i < 3; ++i) {
      auto c = t.column(kColumns[i]);
      if (!c) {
        return Error{t.source_name() + ":1: missing column '" + kColumns[i] + "' (expected header " + kHeader + ")" +
                     FormatHint(t.header())};
      }
      columns[i] = *c;
    }
    priority_column = t.column("priority");
    for (const std::string& name : t.header()) {
      if (name != "time" && name != "server" && name != "power_w" && name != "priority") {
        return Error{t.source_name() + ":1: unknown column '" + PrintableText(name) + "' (expected header " + kHeader +
                     ")"};
      }
    }
    if (t.header().size() != (priority_column ? 4u : 3u)) {
      return Error{t.source_name() + ":1: a column is named twice (expected header " + std::string(kHeader) + ")"};
    }
    trace.priorities_given_ = priority_column.has_value();
    return Status::Ok();
  }

  Status Row(const CsvTable& t, const CsvRow& row) {
    const size_t r = rows++;
    const std::string& time_text = row.fields[columns[0]];
    if (r == 0) iso = LooksLikeIsoDate(time_text);
    double when = 0;
    if (iso) {
      if (!LooksLikeIsoDate(time_text)) {
        return Error{t.where(row, columns[0]) + "expected an ISO 8601 time like the first row's, got '" +
                     PrintableText(time_text) + "'"};
      }
      Result<double> v = ParseIsoTime(time_text);
      if (!v.ok()) return Error{t.where(row, columns[0]) + v.error().message};
      when = *v;
    } else {
      if (LooksLikeIsoDate(time_text)) {
        return Error{t.where(row, columns[0]) + "expected seconds like the first row's, got '" +
                     PrintableText(time_text) + "'"};
      }
      Result<double> v = t.number(row, columns[0]);
      if (!v.ok()) {
        return Error{t.where(row, columns[0]) + "expected seconds (a number) or an ISO 8601 UTC time, got '" +
                     PrintableText(time_text) + "'"};
      }
      if (*v < 0)
        return Error{t.where(row, columns[0]) + "expected seconds >= 0, got '" + PrintableText(time_text) + "'"};
      when = *v;
    }
    if (r == 0) {
      origin = when;
      trace.start_time_ = time_text;
    }
    const double rel = when - origin;
    if (rel < first) trace.start_time_ = time_text;
    first = r == 0 ? rel : std::min(first, rel);
    last = r == 0 ? rel : std::max(last, rel);
    if (last - first > kMaxDurationS) {
      return Error{t.where(row, columns[0]) + "the readings span more than 90 days (a replay's longest run)"};
    }

    const std::string& server = row.fields[columns[1]];
    if (server.empty()) return Error{t.where(row, columns[1]) + "expected a server name, got an empty field"};
    if (server.size() > telemetry::kMaxLabelBytes) {
      return Error{t.where(row, columns[1]) + "a server name of " + std::to_string(server.size()) +
                   " bytes, more than the " + std::to_string(telemetry::kMaxLabelBytes) + " a name may have here"};
    }
    for (unsigned char c : server) {
      if (c < 0x20 || c == 0x7f) {
        // A NUL would make "a\0b" a second server that prints as "a".
        return Error{t.where(row, columns[1]) + "expected a server name without control bytes, got '" +
                     PrintableText(server) + "'"};
      }
    }

    Result<double> power = t.number(row, columns[2]);
    if (!power.ok()) {
      const std::string& text = row.fields[columns[2]];
      return Error{t.where(row, columns[2]) + "expected the server's power in watts (a finite number >= 0), got '" +
                   PrintableText(text) + "'"};
    }
    if (*power < 0 || *power > kMaxServerPowerW) {
      return Error{t.where(row, columns[2]) + "expected the server's power in watts, >= 0 and at most 1000000, got '" +
                   PrintableText(row.fields[columns[2]]) + "'"};
    }

    Priority priority = Priority::kHigh;
    if (priority_column) {
      const std::string& p = row.fields[*priority_column];
      if (p == "high") {
        priority = Priority::kHigh;
      } else if (p == "low") {
        priority = Priority::kLow;
      } else {
        return Error{t.where(row, *priority_column) + "expected high or low, got '" + PrintableText(p) + "'"};
      }
    }

    auto it = seen.find(server);
    if (it == seen.end()) {
      if (trace.servers_.size() == static_cast<size_t>(kMaxServersPerRow)) {
        return Error{t.where(row, columns[1]) + "more than " + std::to_string(kMaxServersPerRow) +
                     " servers (a row; see row_limits.h)"};
      }
      it = seen.emplace(server, Seen{trace.servers_.size(), row.line, row.line}).first;
      TracedServer s;
      s.name = server;
      s.priority_given = priority_column.has_value();
      s.priority = priority;
      trace.servers_.push_back(std::move(s));
    } else {
      TracedServer& s = trace.servers_[it->second.index];
      if (priority_column && priority != s.priority) {
        return Error{t.where(row, *priority_column) + "server '" + PrintableText(server) + "' changes priority to " +
                     row.fields[*priority_column] + " (it was " + (s.priority == Priority::kLow ? "low" : "high") +
                     " on line " + std::to_string(it->second.priority_line) + "); a server keeps one priority"};
      }
      const double previous = s.samples.back().time_s;
      if (rel <= previous) {
        return Error{t.where(row, columns[0]) + "the readings of server '" + PrintableText(server) +
                     "' must be in increasing time: '" + PrintableText(time_text) + "' is " +
                     (rel == previous ? "the same time as" : "earlier than") + " its reading on line " +
                     std::to_string(it->second.last_line)};
      }
      it->second.last_line = row.line;
    }
    trace.servers_[it->second.index].samples.push_back({rel, *power});
    return Status::Ok();
  }

  Result<PowerTrace> Finish() {
    if (rows == 0) return Error{trace.name_ + ": no readings after the header"};
    // Times relative to the earliest reading of any server; the median interval in place.
    size_t intervals_count = 0;
    for (TracedServer& s : trace.servers_) intervals_count += s.samples.empty() ? 0 : s.samples.size() - 1;
    std::vector<double> intervals;
    intervals.reserve(intervals_count);
    for (TracedServer& s : trace.servers_) {
      s.samples.shrink_to_fit();
      for (size_t i = 0; i < s.samples.size(); ++i) {
        s.samples[i].time_s -= first;
        if (i > 0) intervals.push_back(s.samples[i].time_s - s.samples[i - 1].time_s);
      }
    }
    trace.span_s_ = last - first;
    if (!intervals.empty()) trace.sample_interval_s_ = UpperMedian(intervals);
    return std::move(trace);
  }
};

Result<PowerTrace> PowerTrace::Parse(const std::string& text, const std::string& source_name) {
  Builder builder;
  Status s = CsvTable::ForEachRow(
      text, source_name, [&](const CsvTable& t) { return builder.Header(t); },
      [&](const CsvTable& t, CsvRow& row) { return builder.Row(t, row); });
  if (!s.ok()) return s.error();
  return builder.Finish();
}

Result<PowerTrace> PowerTrace::FromServers(std::string name, std::string start_time,
                                           std::vector<TracedServer> servers) {
  if (servers.empty()) return Error{name + ": no servers"};
  if (servers.size() > static_cast<size_t>(kMaxServersPerRow)) {
    return Error{name + ": " + std::to_string(servers.size()) + " servers, more than " +
                 std::to_string(kMaxServersPerRow) + " (a row; see row_limits.h)"};
  }
  PowerTrace trace;
  trace.name_ = std::move(name);
  trace.start_time_ = std::move(start_time);
  std::map<std::string, size_t> seen;
  double first = 0, last = 0;
  bool any = false;
  for (size_t i = 0; i < servers.size(); ++i) {
    const TracedServer& s = servers[i];
    const std::string who = trace.name_ + ": server '" + PrintableText(s.name) + "': ";
    if (s.name.empty()) return Error{trace.name_ + ": a server without a name"};
    for (unsigned char c : s.name) {
      if (c < 0x20 || c == 0x7f) return Error{who + "expected a server name without control bytes"};
    }
    if (!seen.emplace(s.name, i).second) return Error{who + "named twice"};
    if (s.samples.empty()) return Error{who + "no readings"};
    for (size_t k = 0; k < s.samples.size(); ++k) {
      const PowerSample& p = s.samples[k];
      if (!std::isfinite(p.time_s) || (k > 0 && p.time_s <= s.samples[k - 1].time_s)) {
        return Error{who + "readings must be in increasing time"};
      }
      if (!(p.power_w >= 0) || p.power_w > kMaxServerPowerW) {
        return Error{who + "a power of " + std::to_string(p.power_w) + " W, expected >= 0 and at most 1000000"};
      }
    }
    first = any ? std::min(first, s.samples.front().time_s) : s.samples.front().time_s;
    last = any ? std::max(last, s.samples.back().time_s) : s.samples.back().time_s;
    any = true;
  }
  if (last - first > kMaxDurationS)
    return Error{trace.name_ + ": the readings span more than 90 days (a replay's longest run)"};
  trace.priorities_given_ = servers.front().priority_given;
  std::vector<double> intervals;
  for (TracedServer& s : servers) {
    for (size_t k = 0; k < s.samples.size(); ++k) {
      s.samples[k].time_s -= first;
      if (k > 0) intervals.push_back(s.samples[k].time_s - s.samples[k - 1].time_s);
    }
  }
  trace.span_s_ = last - first;
  if (!intervals.empty()) trace.sample_interval_s_ = UpperMedian(intervals);
  trace.servers_ = std::move(servers);
  return trace;
}

}  // namespace wattcut::polca
